#!/usr/bin/env bash
# aarch64 Linux, cross-built on this machine and run under qemu-user:
#   1. the tools, when missing: the Rust target (rustup), Debian's cross
#      compilers (gcc/g++-aarch64-linux-gnu) and qemu-user (apt, as root or
#      with sudo),
#   2. the library for aarch64-unknown-linux-gnu: the same exported symbols
#      as the x86-64 build given,
#   3. cargo test under qemu-aarch64 (child processes start through the same
#      runner: TVM_FFI_TEST_RUNNER; the library picks the cross compiler for
#      the native code it builds, as `cc` targets x86-64 here),
#   4. the C and C++ tests under qemu, against our library and the official
#      aarch64 wheel's, with transcript diffs.
# usage: tests/platforms/aarch64/run.sh VENV X86_64_LIBRARY [PROFILE]
# Prints "aarch64: N passed". Without the tools and no way to install them
# it says why and prints "aarch64: skipped".
set -euo pipefail
venv="$(realpath "$1")"
x86_lib="$(realpath "$2")"
profile="${3:-testing}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/aarch64"
triple=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
mkdir -p "$work"

skip() { echo "aarch64: skipped ($1)"; exit 0; }
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  packages=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user)
  "$root/tests/tools/apt-install.sh" "$work/apt.log" "${packages[@]}" ||
    skip "could not install ${packages[*]} (log: $work/apt.log)"
fi
"$root/tests/tools/rustup-target.sh" "$work/rustup.log" "$triple" || skip "rustup could not add $triple"

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $sysroot"
export TVM_FFI_TEST_RUNNER="$CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER"
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }

# 2. Build; compare the exports with the x86-64 library's.
(cd "$root" && cargo build --locked --profile "$profile" --target "$triple" --lib --examples)
lib="$root/target/$triple/$profile/libtvm_ffi.so"
exports() { "$root/tests/tools/exported-symbols.sh" "$1"; }
readelf -h "$lib" | grep -q 'Machine:.*AArch64' || { echo "FAILED: $lib is not an AArch64 library"; exit 1; }
diff <(exports "$x86_lib") <(exports "$lib") || { echo "FAILED: the aarch64 library exports other symbols"; exit 1; }
ok "built for $triple: the same $(exports "$lib" | wc -l) exported symbols as on x86-64"

# 3. cargo test under qemu; the official aarch64 wheel, if it downloads,
# for the static host's test (an official C++ extension bound through the
# soname stub) and the C tests below.
official_dir="$("$root/tests/tools/official-wheel.sh" "$venv" "$work" \
  --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64)" ||
  { official_dir=""; echo "note: the official aarch64 wheel could not be downloaded: our library's C tests only"; }
(cd "$root" && cargo test --locked --profile "$profile" --target "$triple") 2>&1 | tee "$work/cargo-test.log"
if [ -n "$official_dir" ]; then
  (cd "$root" && TVM_FFI_OFFICIAL_DIR="$official_dir" cargo test --locked --profile "$profile" --target "$triple" \
    --test static_host) 2>&1 | tee -a "$work/cargo-test.log"
fi
cargo_passed=$(awk '/^test result: ok/ { n += $4 } END { print n + 0 }' "$work/cargo-test.log")
ok "cargo test under qemu-aarch64: $cargo_passed tests"

# 4. The C tests under qemu, against the official aarch64 wheel too.
"$venv/bin/cmake" -S "$root/c-tests" -B "$work/c-tests" \
  -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
  -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64;-L;$sysroot" \
  -DTVM_FFI_LIBRARY="$lib" -DTVM_FFI_OFFICIAL_DIR="$official_dir" >/dev/null
"$venv/bin/cmake" --build "$work/c-tests" -j2 >/dev/null
"$venv/bin/ctest" --test-dir "$work/c-tests" -j2 --output-on-failure | tee "$work/ctest.log"
ctest_passed=$(awk '/tests passed/ { print $NF }' "$work/ctest.log")
ok "C tests under qemu-aarch64: $ctest_passed (official library: ${official_dir:-none})"
# The exports check, each cargo test and each C test.
echo "aarch64: $((1 + cargo_passed + ctest_passed)) passed"
