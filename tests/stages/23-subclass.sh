# subclasses defined in Python, on every receiver: official library, then ours (transcript diff)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_subclass() {
  need_pkg_ours
  "$venv/bin/python" tests/python/subclass.py >target/subclass-py-official.log
  ours "$venv/bin/python" tests/python/subclass.py --ours >target/subclass-py-ours.log
  diff target/subclass-py-official.log \
    <(grep -v -e '^ours-only:' -e '^subclass-py-ours-only:' target/subclass-py-ours.log)
  local n
  n=$(count '^subclass-py(-ours-only)?:' target/subclass-py-ours.log)
  echo "subclass-py: $n checks, identical transcripts"
  passed "$n"
}
