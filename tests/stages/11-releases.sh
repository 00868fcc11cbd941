# every published apache-tvm-ffi release on ours: imports, its testing library, the suites of five
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_releases() {
  tests/releases/run.sh "$venv" "$lib" | tee target/releases.log
  passed "$(count '^releases:' target/releases.log)"
}
