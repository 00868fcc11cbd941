# the official C++ unit tests (gtest), on the official library and on ours
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_official_cpp() {
  tests/official/cpp/run.sh "$venv" "$lib" | tee target/cxx-suite.log
  passed "$(count '^cxx-suite:' target/cxx-suite.log)"
}
