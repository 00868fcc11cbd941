# artifacts through the official Python package on our library
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_artifacts_python() {
  need_pkg_ours
  ours "$venv/bin/python" tests/python/artifacts.py | tee target/artifacts-python.log
  passed "$(count '^artifacts-python:' target/artifacts-python.log)"
}
