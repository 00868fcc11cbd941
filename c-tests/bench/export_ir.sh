#!/usr/bin/env bash
# Instructions per call of `add_one(1)` through a module function, by how
# the library was written: hand-written C, the official C++ export macro
# (TVM_FFI_DLL_EXPORT_TYPED_FUNC), the official Rust crate
# (tvm_ffi_dll_export_typed_func!) and tvmffi (#[export]); each loaded by
# the official library and by ours (bench_core.c's module_call, callgrind,
# (Ir at 2N - Ir at N) / N, harness loop included).
# usage: c-tests/bench/export_ir.sh   (after c-tests/bench/run.sh built
#        target/bench; needs valgrind)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/target/bench"
venv="$root/target/venv"
command -v valgrind >/dev/null || { echo "needs valgrind"; exit 1; }
[ -x "$out/bench_ours" ] || { echo "run c-tests/bench/run.sh first"; exit 1; }
official="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi)"

printf '#include <tvm/ffi/function.h>\nstatic int64_t AddOne(int64_t x) { return x + 1; }\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);\n' \
  > "$out/export_cxx.cc"
g++ -O2 -std=c++17 -shared -fPIC -I"$official/include" "$out/export_cxx.cc" -L"$official/lib" -ltvm_ffi \
  -o "$out/export_cxx.so"
(cd "$root" && cargo build --release --locked --quiet -p rust-tasks-ours-ext)
cp "$root/target/release/libtask1_ours.so" "$out/export_tvmffi.so"
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/rust-tasks" cargo build --release --locked --quiet \
  --manifest-path "$root/tests/rust-api/tasks/official/Cargo.toml"
cp "$root/target/rust-tasks/release/libtask1_official.so" "$out/export_official_crate.so"

ir() { # binary module iterations
  BENCH_MODULE="$2" BENCH_ONLY=module_call BENCH_ITERS="$3" \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" 2>&1 | awk '/Collected/ { print $NF }'
}
per_call() { # binary module
  local a b
  a=$(ir "$1" "$2" 20000)
  b=$(ir "$1" "$2" 40000)
  echo $(((b - a) / 20000))
}
printf "%-44s %12s %12s\n" "add_one exported by" official_Ir ours_Ir
for m in "one.so:hand-written C" "export_cxx.so:C++ TVM_FFI_DLL_EXPORT_TYPED_FUNC" \
  "export_official_crate.so:official Rust crate" "export_tvmffi.so:tvmffi #[export]"; do
  printf "%-44s %12d %12d\n" "${m#*:}" "$(per_call "$out/bench_official" "$out/${m%%:*}")" \
    "$(per_call "$out/bench_ours" "$out/${m%%:*}")"
done
