#!/usr/bin/env bash
# Builds bench_core.c against our library and the official one (from the
# venv tests/run-all.sh sets up) and prints ns/op and the ratio ours/official.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
official="$(echo "$root"/target/venv/lib/python3*/site-packages/tvm_ffi)"
[ -f "$official/lib/libtvm_ffi.so" ] || { echo "run tests/run-all.sh first (needs target/venv)"; exit 1; }
(cd "$root" && cargo build --release --locked)
out="$root/target/bench"
mkdir -p "$out"
build() { # name include libdir
  gcc -O2 -std=c11 -I"$2" "$root/c-tests/bench/bench_core.c" -L"$3" -Wl,-rpath,"$3" -ltvm_ffi -o "$out/$1"
}
build bench_ours "$root/include" "$root/target/release"
build bench_official "$official/include" "$official/lib"
build_module() { # name include libdir
  gcc -O2 -std=c11 -I"$2" "$root/c-tests/bench/bench_module.c" -L"$3" -Wl,-rpath,"$3" -ltvm_ffi -o "$out/$1"
}
build_module bench_module_ours "$root/include" "$root/target/release"
build_module bench_module_official "$official/include" "$official/lib"
# A library exporting 1000 __tvm_ffi_ functions.
{
  echo '#include <tvm/ffi/c_api.h>'
  for i in $(seq 0 999); do
    echo "int __tvm_ffi_f$i(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) { (void)s; (void)n; r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = a[0].v_int64 + $i; return 0; }"
  done
} > "$out/lib1000.c"
gcc -O2 -shared -fPIC -I"$root/include" "$out/lib1000.c" -o "$out/lib1000.so"
# A library exporting one function (the warm-load path of bench_core.c).
echo '#include <tvm/ffi/c_api.h>
int __tvm_ffi_add_one(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) { (void)s; (void)n; r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = a[0].v_int64 + 1; return 0; }' > "$out/one.c"
gcc -O2 -shared -fPIC -I"$root/include" "$out/one.c" -o "$out/one.so"
mkdir -p "$out/cold"
for i in $(seq 0 399); do cp "$out/one.so" "$out/cold/c$i.so"; done
# Copies linked in turn over reload/lib.so once it is loaded (the reload
# path of bench_core.c).
rm -rf "$out/reload" && mkdir -p "$out/reload"
for i in $(seq 0 399); do cp "$out/one.so" "$out/reload/r$i.so"; done
cp "$out/one.so" "$out/reload/lib.so"
# The C++ custom module kind of the C tests, built with the official headers.
g++ -O2 -std=c++17 -shared -fPIC -Wno-unused-parameter -I"$official/include" \
  "$root/c-tests/plugin/custom_module.cc" -o "$out/custom_module.so"
# Peak memory of loading a 256 MiB library with an embedded (minimal) tree.
build_memory() { # name include libdir
  gcc -O2 -std=c11 -I"$2" "$root/c-tests/bench/load_memory.c" -L"$3" -Wl,-rpath,"$3" -ltvm_ffi -o "$out/$1"
}
build_memory load_memory_ours "$root/include" "$root/target/release"
build_memory load_memory_official "$official/include" "$official/lib"
{
  echo '.section .rodata'
  echo '.globl __tvm_ffi__library_bin'
  echo '.p2align 3'
  # nbytes 28, indptr [0, 0], no children, one module: "_lib".
  echo '__tvm_ffi__library_bin: .quad 44, 2, 0, 0, 0, 4'
  echo '.ascii "_lib"'
  echo '.zero 268435456'
  echo '.section .note.GNU-stack,"",@progbits'
} > "$out/big.s"
[ -f "$out/big.so" ] || gcc -shared -nostdlib "$out/big.s" -o "$out/big.so"
export BENCH_MODULE="$out/one.so" BENCH_COLD_DIR="$out/cold" BENCH_RELOAD_DIR="$out/reload"
{ "$out/bench_official"; "$out/bench_module_official" "$out/lib1000.so" "$out/custom_module.so"; "$out/load_memory_official" "$out/big.so"; } > "$out/official.txt"
{ "$out/bench_ours"; "$out/bench_module_ours" "$out/lib1000.so" "$out/custom_module.so"; "$out/load_memory_ours" "$out/big.so"; } > "$out/ours.txt"
printf "%-28s %10s %10s %8s\n" path official_ns ours_ns ratio
join <(sort "$out/official.txt") <(sort "$out/ours.txt") |
  awk '{ printf "%-28s %10.2f %10.2f %8.3f\n", $1, $2, $3, $3 / $2 }'
# Ours only (the official library has no artifacts): loading an exported set
# of 1,000 artifacts with 256 MiB of constants copies nothing.
gcc -O2 -std=c11 -I"$root/include" "$root/c-tests/bench/artifact_memory.c" -L"$root/target/release" \
  -Wl,-rpath,"$root/target/release" -ltvm_ffi -o "$out/artifact_memory"
[ -f "$out/artifact_set.so" ] || "$out/artifact_memory" make "$out/artifact_set.so" 256 998 >/dev/null
echo "artifact set: 1,000 artifacts, 256 MiB of constants, $(($(stat -c %s "$out/artifact_set.so") / 1024)) KiB library"
"$out/artifact_memory" load "$out/artifact_set.so"
# A compiler's import: registrations, lookups, name listings,
# backtraces and an error, by phase, in ns per operation (one process each).
gcc -O2 -std=c11 -I"$root/include" "$root/c-tests/bench/import_pattern.c" -L"$root/target/release" \
  -Wl,-rpath,"$root/target/release" -ltvm_ffi -o "$out/import_ours"
gcc -O2 -std=c11 -I"$official/include" "$root/c-tests/bench/import_pattern.c" -L"$official/lib" \
  -Wl,-rpath,"$official/lib" -ltvm_ffi -o "$out/import_official"
printf "%-28s %10s %10s %8s\n" import_phase official_ns ours_ns ratio
join <("$out/import_official" | sort) <("$out/import_ours" | sort) |
  awk '{ printf "%-28s %10.2f %10.2f %8.3f\n", $1, $2, $3, $3 / $2 }'
# Instructions per operation (callgrind), when valgrind is there.
if command -v valgrind >/dev/null 2>&1; then
  "$root/c-tests/bench/ir.sh"
  "$root/c-tests/bench/import_ir.sh"
fi
