# TVM 0.27's libraries without import tvm: NumPy's answers and CUDA modules on ours; the official library fails on them as before
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_tvm_libraries() {
  need_pkg_ours
  mkdir -p target/tvm-libraries
  TVM_LIBRARIES_TMP="$root/target/tvm-libraries" ours "$venv/bin/python" tests/python/tvm_libraries.py ours \
    | tee target/tvm-libraries-ours.log
  TVM_LIBRARIES_TMP="$root/target/tvm-libraries" "$venv/bin/python" tests/python/tvm_libraries.py official \
    | tee target/tvm-libraries-official.log
  passed "$(cat target/tvm-libraries-ours.log target/tvm-libraries-official.log | awk '/^tvm-libraries:/ { n += $2 } END { print n + 0 }')"
}
