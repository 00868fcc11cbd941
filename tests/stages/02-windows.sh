# bg:Windows x86-64: tvm_ffi.dll built with mingw, exports, cargo test and the C tests (ours and official) under Wine
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
# Windows runs beside the stages from the C tests to the end: alone it
# keeps the 2 cores two-thirds busy (its programs run under Wine one at a
# time), and the stages below leave a core partly idle too. It builds in its
# own directories (target/x86_64-pc-windows-gnu, target/debug for its build
# scripts, target/windows), which no stage below uses.
stage_windows() {
  tests/platforms/windows/run.sh "$venv"
}
after_windows() { passed "$(count '^windows:' target/windows.log)"; }
