# C++ custom modules through the official Python package (official library, then ours)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_cxx_module() {
  need_pkg_ours
  PATH="$venv/bin:$PATH" "$venv/bin/python" tests/python/cxx_module.py target/cxx-module/official >target/cxx-module-official.log
  PATH="$venv/bin:$PATH" ours "$venv/bin/python" tests/python/cxx_module.py target/cxx-module/ours >target/cxx-module-ours.log
  diff target/cxx-module-official.log target/cxx-module-ours.log
  local n
  n=$(count '^cxx-module:' target/cxx-module-ours.log)
  echo "cxx-module: $n checks, identical transcripts"
  passed "$n"
}
