# C tests (ours and official, with transcript diffs)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_c() {
  need_c_tests
  "$venv/bin/ctest" --test-dir target/c-tests -j2 --output-on-failure | tee target/ctest.log
  passed "$(awk '/tests passed/ { print $NF }' target/ctest.log)"
}
