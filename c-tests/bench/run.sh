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
"$out/bench_official" > "$out/official.txt"
"$out/bench_ours" > "$out/ours.txt"
printf "%-28s %10s %10s %8s\n" path official_ns ours_ns ratio
join <(sort "$out/official.txt") <(sort "$out/ours.txt") |
  awk '{ printf "%-28s %10.2f %10.2f %8.3f\n", $1, $2, $3, $3 / $2 }'
