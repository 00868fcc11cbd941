# loaded code seen by gdb, perf, valgrind, ASan and dladdr; descriptors, copies, mounts (both libraries)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_loader_tools() {
  tests/loader-tools/run.sh "$venv" "$lib" | tee target/loader-tools.log
  passed "$(count '^loader-tools:' target/loader-tools.log)"
}
