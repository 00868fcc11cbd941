# kernel-DSL quick start (Python): on ours, then the exported library on the official package
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_kernel_dsl() {
  need_pkg_ours
  rm -rf target/kernel-dsl
  ours "$venv/bin/python" examples/kernel_dsl.py target/kernel-dsl
  "$venv/bin/python" examples/kernel_dsl.py --call target/kernel-dsl/scale_add.so
}
