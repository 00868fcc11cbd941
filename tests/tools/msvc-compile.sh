#!/usr/bin/env bash
# The C++ layer (src/cxx) compiled in MSVC's ABI for x86-64 and ARM64 (into
# a scratch directory: nothing is linked), with the sources and flags the
# Windows builds use
# (src/cxx/msvc/compile.txt): a standard facility MSVC's stand-in headers
# (src/cxx/msvc/std.h) lack fails here in seconds, not in the Windows
# stage. The compiler: TVM_FFI_MSVC_CXX when set (as for the build),
# clang++ when on PATH, else PyPI's zig (installed into VENV) through
# tests/tools/zig-windows/c++.
# usage: tests/tools/msvc-compile.sh VENV. Prints "msvc-compile: N passed".
set -euo pipefail
venv="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [ -n "${TVM_FFI_MSVC_CXX:-}" ]; then
  read -r -a cxx <<<"$TVM_FFI_MSVC_CXX"
elif command -v clang++ >/dev/null 2>&1; then
  cxx=(clang++)
else
  ZIG="$("$root/tests/tools/zig.sh" "$venv" "$root/target/msvc-compile-pip.log")"
  export ZIG
  cxx=("$root/tests/tools/zig-windows/c++")
fi
section=""
sources=()
flags=()
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"
  case "$line" in
    "" | "#"*) ;;
    "[sources]" | "[flags]") section="$line" ;;
    *) if [ "$section" = "[sources]" ]; then sources+=("$line"); else flags+=("$line"); fi ;;
  esac
done <"$root/src/cxx/msvc/compile.txt"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
passed=0
for arch in x86_64 aarch64; do
  for src in "${sources[@]}"; do
    "${cxx[@]}" "--target=$arch-pc-windows-msvc" "${flags[@]}" -I"$root/include" \
      -c "$root/src/cxx/$src" -o "$scratch/out.o" ||
      { echo "FAILED: src/cxx/$src in MSVC's ABI ($arch, ${cxx[*]})"; exit 1; }
    passed=$((passed + 1))
  done
done
echo "msvc-compile: $passed passed (${cxx[*]}: ${#sources[@]} sources, x86-64 and ARM64)"
