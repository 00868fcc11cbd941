# examples (C): the main example, and artifacts loaded by ours and by the official library
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_examples() {
  cargo run --profile "$profile" --locked --example add_one_c
  TVM_FFI_OFFICIAL_DIR="$official_dir" cargo run --profile "$profile" --locked --example artifacts_c
}
