#!/usr/bin/env bash
# Windows on ARM64 from Linux: tvm_ffi.dll built for
# aarch64-pc-windows-gnullvm with zig (PyPI's `ziglang`: mingw-w64's
# headers and libraries for ARM64; its clang builds the C++ layer in MSVC's
# ABI) as C and C++ compiler, archiver and linker (tests/tools/zig-windows.sh),
# then checked:
#   - an ARM64 DLL that imports only system DLLs, the UCRT and MSVC's C++
#     runtime (vcruntime140.dll, as the official DLL);
#   - it exports every name the official win_arm64 DLL exports (the
#     wheel's): its C functions and its MSVC-mangled C++ symbols;
#   - a C program (c-tests/test_error.c) compiles and links against it
#     through its import library.
# Running it needs an ARM64 Windows machine: nothing runs here. A debug
# build, warnings denied.
# usage: tests/platforms/windows-arm64/build.sh VENV
# Prints "windows-arm64: N passed" or "skipped".
set -euo pipefail
venv="$(cd "$1" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/windows-arm64"
triple=aarch64-pc-windows-gnullvm
mkdir -p "$work"
skip() { echo "windows-arm64: skipped ($1)"; exit 0; }
fail() { echo "FAILED: $1"; exit 1; }
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }

ZIG="$("$root/tests/tools/zig.sh" "$venv" "$work/pip.log" lief=lief)" ||
  skip "could not install ziglang and lief from PyPI (log: $work/pip.log)"
export ZIG
"$root/tests/tools/rustup-target.sh" "$work/rustup.log" "$triple" ||
  skip "rustup could not add $triple (log: $work/rustup.log)"

tools="$root/tests/tools/zig-windows"
export CC_aarch64_pc_windows_gnullvm="$tools/cc" CXX_aarch64_pc_windows_gnullvm="$tools/c++"
export AR_aarch64_pc_windows_gnullvm="$tools/ar" CARGO_TARGET_AARCH64_PC_WINDOWS_GNULLVM_LINKER="$tools/cc"
# The C++ layer in MSVC's ABI (build.rs), by zig's clang too.
export TVM_FFI_MSVC_CXX="$tools/c++"
export RUSTFLAGS="-D warnings" CARGO_PROFILE_DEV_DEBUG=0
# Its own target directory: the x86-64 Windows stage builds beside it.
export CARGO_TARGET_DIR="$work/cargo"
(cd "$root" && cargo build --locked --quiet --lib --target "$triple")
dll="$CARGO_TARGET_DIR/$triple/debug/tvm_ffi.dll"
implib="$CARGO_TARGET_DIR/$triple/debug/libtvm_ffi.dll.a"
[ -f "$implib" ] || fail "no import library beside $dll"
ok "built for $triple: $(($(stat -c %s "$dll") / 1024)) KiB (debug, no debug information), with its import library"

# The official win_arm64 DLL, from its wheel.
official=""
if official_dir="$("$root/tests/tools/official-wheel.sh" "$venv" "$work" --platform win_arm64)"; then
  official="$official_dir/lib/tvm_ffi.dll"
fi
"$venv/bin/python" - "$dll" "$official" <<'PY' || exit 1
import sys, lief
ours = lief.parse(sys.argv[1])
if ours.header.machine != lief.PE.Header.MACHINE_TYPES.ARM64:
    sys.exit(f"FAILED: {sys.argv[1]} is not an ARM64 DLL: {ours.header.machine}")
# The system's DLLs, and MSVC's C++ runtime (vcruntime140.dll), which the
# official DLL needs too.
system = ("kernel32.dll", "ntdll.dll", "userenv.dll", "ws2_32.dll", "bcryptprimitives.dll",
          "vcruntime140.dll")
imports = sorted({i.name.lower() for i in ours.imports})
strays = [n for n in imports if n not in system and not n.startswith("api-ms-win-")]
if strays:
    sys.exit(f"FAILED: the DLL needs DLLs beyond the system's: {strays}")
print(f"ok: an ARM64 DLL needing only {', '.join(imports)}")
exports = {e.name for e in ours.get_export().entries}
if sys.argv[2]:
    official = lief.parse(sys.argv[2])  # kept alive while its entries are read
    theirs = {e.name for e in official.get_export().entries}
    missing = sorted(theirs - exports)
    if missing:
        sys.exit(f"FAILED: not exported: {missing}")
    cxx = sum(1 for n in theirs if n.startswith("?"))
    print(f"ok: exports all {len(theirs)} names of the official win_arm64 DLL, its {cxx} "
          f"MSVC C++ symbols included (ours: {len(exports)} names)")
else:
    print("note: the official win_arm64 wheel could not be downloaded: exports not compared")
PY
passed=$((passed + 1 + $([ -n "$official" ] && echo 1 || echo 0)))

"$tools/cc" -I"$root/include" -I"$root/c-tests" "$root/c-tests/test_error.c" \
  -L"$(dirname "$implib")" -ltvm_ffi -o "$work/test_error.exe"
"$venv/bin/python" - "$work/test_error.exe" <<'PY'
import sys, lief
exe = lief.parse(sys.argv[1])
assert exe.header.machine == lief.PE.Header.MACHINE_TYPES.ARM64, exe.header.machine
assert "tvm_ffi.dll" in {i.name.lower() for i in exe.imports}, "the program does not import tvm_ffi.dll"
PY
ok "a C program (c-tests/test_error.c) compiles and links against it: an ARM64 executable importing tvm_ffi.dll"
echo "windows-arm64: $passed passed"
