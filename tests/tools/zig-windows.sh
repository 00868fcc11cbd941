#!/usr/bin/env bash
# The C compiler, C++ compiler and linker for Windows on ARM64
# (aarch64-pc-windows-gnullvm), from zig (PyPI's `ziglang`), which has
# mingw-w64's headers and libraries for that target, and a clang that
# builds the C++ layer in MSVC's ABI (also for x86-64, where clang is
# missing).
#
# Called through its links, whose names say the tool:
#
#   ZIG=path/to/zig                      (default: `zig` on PATH)
#   CC_aarch64_pc_windows_gnullvm=tests/tools/zig-windows/cc
#   CXX_aarch64_pc_windows_gnullvm=tests/tools/zig-windows/c++
#   AR_aarch64_pc_windows_gnullvm=tests/tools/zig-windows/ar
#   TVM_FFI_MSVC_CXX=tests/tools/zig-windows/c++
#   CARGO_TARGET_AARCH64_PC_WINDOWS_GNULLVM_LINKER=tests/tools/zig-windows/cc
#
# The target comes from cc-rs's and build.rs's `--target=ARCH-pc-windows-ENV`
# in zig's spelling (`ARCH-windows-msvc` for build.rs's C++ layer in MSVC's
# ABI, `ARCH-windows-gnu` otherwise; aarch64-windows-gnu without one). It
# drops what zig does not take from cc-rs and rustc: `-lmsvcrt` (zig's
# mingw for ARM64 is UCRT-only); a module definition file rustc passes as
# `-Wl,FILE.def` goes in as an input. Code is built without UBSan and stack
# protectors, which zig turns on by default and whose runtimes a DLL
# should not carry.
set -euo pipefail
tool="$(basename "$0")"
zig="${ZIG:-zig}"
[ "$tool" = ar ] && exec "$zig" ar "$@"
target=aarch64-windows-gnu
args=()
for a in "$@"; do
  case "$a" in
    --target=*-msvc) t="${a#--target=}" && target="${t%%-*}-windows-msvc" ;;
    --target=*) t="${a#--target=}" && target="${t%%-*}-windows-gnu" ;;
    -lmsvcrt) ;;
    -Wl,*.def) args+=("${a#-Wl,}") ;;
    *) args+=("$a") ;;
  esac
done
exec "$zig" "$tool" -target "$target" -fno-sanitize=undefined -fno-stack-protector "${args[@]}"
