# cross-loading with the official Python package
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_cross_load() {
  "$venv/bin/python" tests/python/cross_load.py "$lib" | tee target/cross-load.log
  passed "$(count '^cross-load:' target/cross-load.log)"
}
