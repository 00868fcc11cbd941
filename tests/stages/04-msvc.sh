# the C++ layer compiled in MSVC's ABI for x86-64 and ARM64 (seconds; the Windows stages link it)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_msvc() {
  tests/tools/msvc-compile.sh "$venv" | tee target/msvc-compile.log
  passed "$(count '^msvc-compile:' target/msvc-compile.log)"
}
