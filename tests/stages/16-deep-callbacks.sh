# deep Python -> FFI -> Python recursion: a RecursionError on ours (the official library dies)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_deep_callbacks() {
  need_pkg_ours
  "$venv/bin/python" tests/python/deep_callbacks.py --official
  ours "$venv/bin/python" tests/python/deep_callbacks.py | tee target/deep-callbacks.log
  passed "$(count '^deep-callbacks-py:' target/deep-callbacks.log)"
}
