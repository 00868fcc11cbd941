# fuzzing every parser of untrusted bytes (bounded)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_fuzz() {
  fuzz/run.sh "${TVM_FFI_FUZZ_SECONDS:-10}" || { echo "fuzzing found a failure (target/fuzz-*.log, fuzz/artifacts)"; exit 1; }
  echo "fuzzing: no crash"
}
