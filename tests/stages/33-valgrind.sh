# C tests under valgrind (our library): no leaks, no invalid accesses
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_valgrind() {
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: skipped (not installed)"
    return 0
  fi
  [ -d target/c-tests ] || need_c_tests
  # Two at a time (each valgrind runs its program on one core); xargs fails
  # when one does, after its report.
  ls target/c-tests/test_* | grep -v '_official$' |
    xargs -P 2 -I{} sh -c 'valgrind --quiet --leak-check=full --show-leak-kinds=definite \
      --errors-for-leak-kinds=definite --error-exitcode=3 "$1" >/dev/null && echo "valgrind clean: ${1##*/}"' sh {}
}
