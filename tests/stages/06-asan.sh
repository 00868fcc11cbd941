# C tests on our library under AddressSanitizer and UBSan
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_asan() {
  "$venv/bin/cmake" -S c-tests -B target/c-tests-asan -DSANITIZE=ON -DTVM_FFI_OFFICIAL_DIR="$official_dir" \
    -DTVM_FFI_LIBRARY="$lib" >/dev/null
  # Only the programs on our library (each test's program has its name):
  # the official variants and the transcript diffs stay out.
  local tests
  mapfile -t tests < <("$venv/bin/ctest" --test-dir target/c-tests-asan -N -E "official|_diff" | awk '/Test +#/ { print $3 }')
  "$venv/bin/cmake" --build target/c-tests-asan -j2 --target "${tests[@]}" >/dev/null
  "$venv/bin/ctest" --test-dir target/c-tests-asan -E "official|_diff" -j2 --output-on-failure | tee target/ctest-asan.log
  passed "$(awk '/tests passed/ { print $NF }' target/ctest-asan.log)"
}
