# the official Python test suite, on the official library and on ours
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_official_python() {
  tests/official/python/run.sh "$venv" "$lib" | tee target/suite.log
  passed "$(count '^official-suite:' target/suite.log)"
}
