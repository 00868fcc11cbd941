# structural visitors and mutators: official library, then ours (transcript diff)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_structural() {
  need_pkg_ours
  "$venv/bin/python" tests/python/structural_diff.py >target/structural-official.log
  ours "$venv/bin/python" tests/python/structural_diff.py --ours >target/structural-ours.log
  diff target/structural-official.log <(grep -v '^structural-ours-only:' target/structural-ours.log)
  local n
  n=$(count '^structural-(diff|ours-only):' target/structural-ours.log)
  echo "structural: $n checks, identical transcripts"
  passed "$n"
}
