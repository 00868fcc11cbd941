# wheel: scripts/build-wheel.sh, pip install into a fresh venv, import, call, check the mapped library
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_wheel() {
  tests/packaging/wheel/run.sh "$profile" | tee target/wheel-test.log
  passed "$(count '^wheel:' target/wheel-test.log)"
}
