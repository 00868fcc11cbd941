#!/usr/bin/env bash
# Links libtvm_ffi.so with another linker than the one rustc picks (the
# bundled lld on recent x86-64 toolchains) and checks the library exports
# exactly what the test command's build exports, C and C++ symbols alike.
# GNU ld and gold take one anonymous version script only; the build's link
# shim (scripts/build/link-shim.sh) merges rustc's and ours.
# usage: tests/platforms/linkers/run.sh REFERENCE_LIB [LINKER...]   (default: bfd)
# Builds in target/rust-dependent (dev profile), whose dependencies
# tests/packaging/rust-dependent/run.sh built already: only this crate compiles.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
reference="$1"
shift
linkers=("${@:-bfd}")
target="$root/target/rust-dependent"
exports() { "$root/tests/tools/exported-symbols.sh" "$1"; }
passed=0
for ld in "${linkers[@]}"; do
  (cd "$root" && cargo rustc --locked --quiet --lib --crate-type cdylib --target-dir "$target" \
    -- -C link-arg=-fuse-ld="$ld")
  lib="$target/debug/libtvm_ffi.so"
  # lld signs .comment with "Linker: LLD"; GNU ld and gold leave no mark.
  if readelf -p .comment "$lib" | grep -q 'Linker: LLD'; then
    [ "$ld" = lld ] || { echo "FAILED: $ld was asked for, lld linked"; exit 1; }
  fi
  if ! diff <(exports "$reference") <(exports "$lib") >"$target/exports-$ld.diff"; then
    echo "FAILED: linked by $ld, the exports differ:"; cat "$target/exports-$ld.diff"; exit 1
  fi
  echo "ok: linked by $ld: the same $(exports "$lib" | wc -l) exported symbols"
  passed=$((passed + 1))
done
echo "linkers: $passed passed"
