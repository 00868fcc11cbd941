#!/usr/bin/env bash
# Windows x86-64 (x86_64-pc-windows-gnu), cross-built with mingw-w64 and run
# under Wine:
#   1. the tools, when missing: Debian's mingw-w64 compilers (the -posix
#      variants: the C++ tests need std::mutex), wine and wine64 (apt, as
#      root or with sudo), the Rust target (rustup), and a clang driver for
#      the C++ layer, which is built in MSVC's ABI (clang, else PyPI's zig);
#   2. tvm_ffi.dll (with its import library libtvm_ffi.dll.a), checked
#      against the official win_amd64 wheel's tvm_ffi.dll: every name it
#      exports (C functions, MSVC C++ symbols) is exported by ours; ours
#      needs no DLL beyond the system's and vcruntime140.dll (as the
#      official); the release DLL has no DWARF and is within 2x the size;
#   3. cargo test under Wine: the unit tests and the integration tests that
#      need no Unix tools (the others build ELF libraries or read /proc);
#   4. the C tests (c-tests/) built by mingw against ours and against the
#      official DLL, run under Wine, with transcript diffs; the module
#      library with an embedded __tvm_ffi__library_bin (plugin_with_bin.dll)
#      and the Rust extension example (examples/rust_extension, tvmffi)
#      load and run on both, and so does the official wheel's MSVC-built
#      tvm_ffi_testing.dll (test_msvc_extension) and every MSVC C++ export
#      called from C (test_msvc_abi); an MSVC-ABI C++ program catching the
#      DLL's exceptions and subclassing ModuleObj (msvc_host/host.cc) runs
#      on both DLLs too; test_windows_loader shows the Windows loader's
#      refusals (ours only);
#   5. tvm-ffi-inspect.exe reads those libraries without running them.
# Wine 8 lacks bcryptprimitives.dll, which Rust's standard library imports:
# tests/platforms/windows/bcryptprimitives.c is a stand-in for the tests only.
# usage: tests/platforms/windows/run.sh VENV
# Prints "windows: N passed". Without the tools and no way to install them
# it says why and prints "windows: skipped".
set -euo pipefail
venv="$(cd "$1" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/windows"
triple=x86_64-pc-windows-gnu
mkdir -p "$work"
skip() { echo "windows: skipped ($1)"; exit 0; }
fail() { echo "FAILED: $1"; exit 1; }
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }

# 1. Tools.
if ! command -v x86_64-w64-mingw32-g++-posix >/dev/null || ! command -v wine >/dev/null; then
  packages=(gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix wine wine64)
  "$root/tests/tools/apt-install.sh" "$work/apt.log" "${packages[@]}" ||
    skip "could not install ${packages[*]} (log: $work/apt.log)"
fi
"$root/tests/tools/rustup-target.sh" "$work/rustup.log" "$triple" || skip "rustup could not add $triple"
# The C++ layer is built in MSVC's ABI by a clang driver (build.rs): clang
# where installed, else zig's (PyPI's ziglang), as on a fresh machine.
if ! command -v clang++ >/dev/null; then
  ZIG="$("$root/tests/tools/zig.sh" "$venv" "$work/pip.log")" ||
    skip "no clang, and ziglang could not be installed from PyPI (log: $work/pip.log)"
  export ZIG
  export TVM_FFI_MSVC_CXX="$root/tests/tools/zig-windows/c++"
fi
export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc-posix
export CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++-posix
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc-posix
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$root/tests/platforms/windows/wine-run"
export RUSTFLAGS="-D warnings"
# Without debug information: a third of the build and link time (the DLL is
# 65 MB with it), and no Windows debugger runs here.
export CARGO_PROFILE_DEV_DEBUG=0
run="$root/tests/platforms/windows/wine-run"

# The stand-in DLL, and Wine's prefix (made once, some seconds). One
# wineserver serves every run, its services started here with no pipe of
# ours (a service started by a test would hold the test's output open);
# each program then starts in a few milliseconds instead of a second.
mkdir -p "$work/shim"
x86_64-w64-mingw32-gcc-posix -O2 -shared -o "$work/shim/bcryptprimitives.dll" \
  "$root/tests/platforms/windows/bcryptprimitives.c" -lbcrypt
export WINEPREFIX="$work/prefix"
wineserver -k >/dev/null 2>&1 || true
# The prefix first, made (or updated) by a server of its own, which exits
# once wineboot is done; only then the persistent one, which forks into
# the background once it listens.
"$run" wineboot -i >/dev/null 2>&1 </dev/null || true
wineserver -w
wineserver -p >/dev/null 2>&1 </dev/null
trap 'wineserver -k >/dev/null 2>&1 || true' EXIT
"$run" cmd /c exit 0 >/dev/null 2>&1 </dev/null || fail "Wine does not run a program"

# 2. Build; compare the exports with the official DLL's.
(cd "$root" && cargo build --locked --target "$triple" --lib --bins)
dll="$root/target/$triple/debug/tvm_ffi.dll"
# The Rust extension example (tvmffi, extension mode: it imports the C
# functions from tvm_ffi.dll), built on its own (features are unified
# across the packages of one build).
(cd "$root" && cargo build --locked --target "$triple" -p rust-extension-example)
rust_ext="$root/target/$triple/debug/rust_ext.dll"
[ -f "$root/target/$triple/debug/libtvm_ffi.dll.a" ] || fail "no import library beside $dll"
official_dir="$("$root/tests/tools/official-wheel.sh" "$venv" "$work" --platform win_amd64 --python-version 3.11)" ||
  fail "the official win_amd64 wheel could not be downloaded (log: $work/pip-wheel.log)"
exports() { # the names a DLL exports, sorted
  x86_64-w64-mingw32-objdump -p "$1" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' |
    sed -n 's/^\s*\[ *[0-9]*\] //p' | sort
}
exports "$official_dir/lib/tvm_ffi.dll" >"$work/official.exports"
exports "$dll" >"$work/ours.exports"
missing="$(comm -23 "$work/official.exports" "$work/ours.exports")"
[ -z "$missing" ] || fail "tvm_ffi.dll does not export: $missing"
ok "tvm_ffi.dll exports all $(wc -l <"$work/official.exports") names of the official DLL, its $(grep -c '^?' "$work/official.exports") MSVC C++ symbols included (ours: $(wc -l <"$work/ours.exports") names)"
needed="$(x86_64-w64-mingw32-objdump -p "$dll" | sed -n 's/^\s*DLL Name: //p' | sort -uf | tr '\n' ' ')"
for name in $needed; do
  case "$(echo "$name" | tr '[:upper:]' '[:lower:]')" in
    kernel32.dll | ntdll.dll | msvcrt.dll | userenv.dll | ws2_32.dll | bcryptprimitives.dll | api-ms-win-*) ;;
    # MSVC's C++ runtime, which the official DLL needs too (with msvcp140.dll).
    vcruntime140.dll) ;;
    *) fail "tvm_ffi.dll needs $name, which is not a system DLL" ;;
  esac
done
ok "tvm_ffi.dll needs only system DLLs and vcruntime140.dll: $needed"
# The release DLL, as shipped: no DWARF (build.rs strips it; the COFF
# symbol table that names backtrace frames stays), within twice the
# official DLL's size. Its own target directory: release builds elsewhere
# run beside this stage.
(cd "$root" && CARGO_TARGET_DIR="$work/release" cargo build --locked --quiet --release --lib --target "$triple")
release="$work/release/$triple/release/tvm_ffi.dll"
release_size=$(stat -c %s "$release")
official_size=$(stat -c %s "$official_dir/lib/tvm_ffi.dll")
! x86_64-w64-mingw32-objdump -h "$release" | grep -q '\.debug_' || fail "the release DLL carries DWARF"
[ "$release_size" -le $((2 * official_size)) ] ||
  fail "the release DLL is $release_size bytes, over twice the official's $official_size"
ok "the release tvm_ffi.dll: $release_size bytes, $(awk "BEGIN { printf \"%.2f\", $release_size / $official_size }")x the official's $official_size, no DWARF"

# 3. cargo test under Wine.
tests=(--lib --test boundary --test dlpark_interop --test header_fresh --test hostile_tensors
  --test layers --test library_bin_mutations --test manifests)
(cd "$root" && cargo test --locked --target "$triple" "${tests[@]}") 2>&1 | tee "$work/cargo-test.log"
cargo_passed=$(awk '/^test result: ok/ { n += $4 } END { print n + 0 }' "$work/cargo-test.log")
ok "cargo test under Wine: $cargo_passed tests"

# 4. The C tests under Wine, on ours and on the official DLL.
"$venv/bin/cmake" -S "$root/c-tests" -B "$work/c-tests" \
  -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_SYSTEM_PROCESSOR=AMD64 \
  -DCMAKE_C_COMPILER=x86_64-w64-mingw32-gcc-posix -DCMAKE_CXX_COMPILER=x86_64-w64-mingw32-g++-posix \
  -DCMAKE_RC_COMPILER=x86_64-w64-mingw32-windres \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=$run" \
  -DTVM_FFI_LIBRARY="$dll" -DTVM_FFI_OFFICIAL_DIR="$official_dir" -DRUST_EXTENSION="$rust_ext" >"$work/cmake.log"
"$venv/bin/cmake" --build "$work/c-tests" -j2 >"$work/build.log" || { tail -40 "$work/build.log"; fail "the C tests do not build for Windows"; }
"$venv/bin/ctest" --test-dir "$work/c-tests" -j2 --output-on-failure | tee "$work/ctest.log"
ctest_passed=$(awk '/tests passed/ { print $NF }' "$work/ctest.log")
diffs=$(grep -c '_diff .*Passed' "$work/ctest.log" || true)
ok "C tests under Wine: $ctest_passed, of which $diffs transcript diffs against the official DLL"

# A C++ program built in MSVC's ABI, as the C++ layer is (clang in MSVC
# mode, our class declarations imported): it catches what the DLL throws
# and subclasses ModuleObj. Linked by mingw with import libraries for
# MSVC's runtime, it runs beside each DLL; the transcripts must match.
host="$work/msvc_host"
mkdir -p "$host"
printf 'LIBRARY vcruntime140.dll\nEXPORTS\n%s\n' __CxxFrameHandler3 _CxxThrowException __std_terminate \
  __std_exception_copy __std_exception_destroy _purecall >"$host/vcruntime140.def"
printf 'LIBRARY api-ms-win-crt-heap-l1-1-0.dll\nEXPORTS\n_malloc_base\n_free_base\n' >"$host/heap.def"
x86_64-w64-mingw32-dlltool -d "$host/vcruntime140.def" -l "$host/libvcruntime140.a"
x86_64-w64-mingw32-dlltool -d "$host/heap.def" -l "$host/libucrtheap.a"
for source in tests/platforms/windows/msvc_host/host.cc src/cxx/msvc/runtime.cc; do
  ${TVM_FFI_MSVC_CXX:-clang++} --target=x86_64-pc-windows-msvc -std=c++17 -O1 -nostdlibinc \
    -ffreestanding -fexceptions -fcxx-exceptions -fno-stack-protector -fno-autolink -Wall -Wextra \
    -Werror -Wno-unused-command-line-argument "-DTVM_FFI_DLL=__declspec(dllimport)" \
    "-DTVM_FFI_RS_CXX_API=__declspec(dllimport)" -I"$root/include" -I"$root/src/cxx" \
    -c "$root/$source" -o "$host/$(basename "$source" .cc).o"
done
x86_64-w64-mingw32-gcc-posix -static -o "$host/msvc_host.exe" "$host/host.o" "$host/runtime.o" \
  "$(dirname "$dll")/libtvm_ffi.dll.a" "$host/libvcruntime140.a" "$host/libucrtheap.a"
for side in ours official; do
  cp "$host/msvc_host.exe" "$work/c-tests/$side/"
  "$run" "$work/c-tests/$side/msvc_host.exe" 2>&1 </dev/null | tr -d '\r' >"$host/$side.txt" ||
    fail "msvc_host.exe failed on the $side DLL: $(tail -5 "$host/$side.txt")"
done
diff "$host/official.txt" "$host/ours.txt" || fail "msvc_host.exe: the transcripts differ"
grep -q '^done$' "$host/ours.txt" || fail "msvc_host.exe did not finish"
ok "an MSVC-ABI C++ program catches the DLL's exceptions and subclasses ModuleObj, same transcript on both DLLs ($(wc -l <"$host/ours.txt") lines)"

# 5. Windows libraries inspected without running them (their export table
#    and the embedded tree), by the inspector built for Windows, under Wine.
inspected="$("$run" "$root/target/$triple/debug/tvm-ffi-inspect.exe" \
  "$work/c-tests/plugin_with_bin.dll" "$rust_ext" 2>/dev/null | tr -d '\r')"
echo "$inspected"
grep -q 'functions (3):' <<<"$inspected" && grep -q 'library_bin: 2 module(s)' <<<"$inspected" &&
  grep -q 'functions (11):' <<<"$inspected" || fail "tvm-ffi-inspect.exe misreads the Windows libraries"
ok "tvm-ffi-inspect.exe lists the functions and the embedded tree of plugin_with_bin.dll and rust_ext.dll"
echo "windows: $((passed + cargo_passed + ctest_passed)) passed"
