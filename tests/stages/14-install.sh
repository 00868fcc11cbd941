# install: scripts/install.sh into a prefix; C via pkg-config, CMake and the static library; C++ via CMake
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_install() {
  tests/packaging/install/run.sh "$venv" "$profile" | tee target/install-test.log
  passed "$(count '^install:' target/install-test.log)"
}
