# finalizers calling back while a global is replaced: official library, then ours (transcript diff, 120 s timeout)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_reentrant() {
  need_pkg_ours
  timeout 120 "$venv/bin/python" tests/python/reentrant.py >target/reentrant-official.log
  ours timeout 120 "$venv/bin/python" tests/python/reentrant.py >target/reentrant-ours.log
  diff target/reentrant-official.log target/reentrant-ours.log
  local n
  n=$(count '^reentrant-py:' target/reentrant-ours.log)
  echo "reentrant-py: $n checks, identical transcripts"
  passed "$n"
}
