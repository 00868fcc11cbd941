# aarch64 Linux: cross-built, exports, cargo test and the C tests (ours and official) under qemu-aarch64
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_aarch64() {
  tests/platforms/aarch64/run.sh "$venv" "$lib" "$profile" | tee target/aarch64.log
  passed "$(count '^aarch64:' target/aarch64.log)"
}
