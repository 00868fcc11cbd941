# cargo test
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
# The stages, in the order of `stages` above. A background stage's output
# goes to target/<name>.log (also when it runs in the foreground), which
# its `after_<name>` reads once it is done.
stage_cargo() {
  need_library
  TVM_FFI_OFFICIAL_DIR="$official_dir" cargo test --profile "$profile" --locked 2>&1 | tee target/cargo-test.log
  passed "$(awk '/^test result: ok/ { n += $4 } END { print n + 0 }' target/cargo-test.log)"
}
