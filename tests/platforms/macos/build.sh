#!/usr/bin/env bash
# macOS from Linux: the library (and the inspector) built and linked for
# aarch64-apple-darwin and x86_64-apple-darwin, without Apple's SDK:
#   - C++ (src/cxx) compiled by zig (PyPI's `ziglang`: clang with macOS
#     headers and libc++'s), archived by `zig ar`;
#   - linked by clang driving ld64.lld (Debian's lld-16) against stub
#     libraries (.tbd) in target/macos-link/sdk: zig's libSystem (its target
#     lists narrowed to what lld 16 reads), and libc++ listing the symbols
#     the C++ layer imports (tests/platforms/macos/libcxx.symbols: a link that needs
#     one more names it as undefined);
#   - checked against the official arm64 dylib (the macOS wheel's): every
#     symbol it exports is exported by both of ours, the install name is
#     @rpath/libtvm_ffi.dylib, and the only libraries needed are
#     /usr/lib/libc++.1.dylib and /usr/lib/libSystem.B.dylib.
# Running them needs a Mac. Debug builds, warnings denied (a piece left
# unused outside Linux shows here).
# usage: tests/platforms/macos/build.sh VENV   Prints "macos: N passed" or "skipped".
set -euo pipefail
venv="$(cd "$1" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/macos-link"
mkdir -p "$work/bin" "$work/sdk/usr/lib"
skip() { echo "macos: skipped ($1)"; exit 0; }
fail() { echo "FAILED: $1"; exit 1; }
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }

command -v clang >/dev/null || "$root/tests/tools/apt-install.sh" "$work/apt.log" clang ||
  skip "could not install clang (log: $work/apt.log)"
ld64=/usr/lib/llvm-16/bin/ld64.lld
[ -x "$ld64" ] || "$root/tests/tools/apt-install.sh" "$work/apt.log" lld-16 ||
  skip "could not install lld-16 (log: $work/apt.log)"
zig="$("$root/tests/tools/zig.sh" "$venv" "$work/pip.log" lief=lief)" ||
  skip "could not install ziglang and lief from PyPI (log: $work/pip.log)"
"$root/tests/tools/rustup-target.sh" "$work/rustup.log" aarch64-apple-darwin x86_64-apple-darwin ||
  skip "rustup could not add the Apple targets (log: $work/rustup.log)"

# The compiler: zig c++ for the target cc-rs names (--target=arm64-apple-macosx
# or x86_64-apple-macosx), without the flags zig sets itself.
cat >"$work/bin/zig-cxx" <<SH
#!/usr/bin/env bash
target=aarch64-macos.11.0
args=()
skip=0
for a in "\$@"; do
  if [ \$skip = 1 ]; then skip=0; continue; fi
  case "\$a" in
    --target=x86_64*) target=x86_64-macos.11.0 ;;
    --target=*|-mmacosx-version-min=*|-m64) ;;
    -arch) skip=1 ;;
    *) args+=("\$a") ;;
  esac
done
exec "$zig" c++ -target "\$target" -fno-sanitize=all "\${args[@]}"
SH
printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" >"$work/bin/zig-ar"
# The linker: clang for the architecture rustc names (-arch), ld64.lld, the
# stub SDK; dylibs nothing uses (rustc always asks for libiconv) are dropped.
cat >"$work/bin/macos-cc" <<SH
#!/usr/bin/env bash
arch=arm64
prev=
for a in "\$@"; do [ "\$prev" = -arch ] && arch="\$a"; prev="\$a"; done
exec clang -target "\$arch-apple-macos11" -mlinker-version=705 -fuse-ld="$ld64" -isysroot "$work/sdk" \\
  -Wl,-dead_strip_dylibs "\$@"
SH
chmod +x "$work/bin"/*

python3 - "$(dirname "$zig")/lib/libc/darwin/libSystem.tbd" "$work/sdk/usr/lib" \
  "$root/tests/platforms/macos/libcxx.symbols" <<'PY'
import re, sys, pathlib
src, out, cxx = sys.argv[1:]
out = pathlib.Path(out)
targets = "[ x86_64-macos, arm64-macos ]"
system = re.sub(r"targets:(\s*)\[[^\]]*\]", lambda m: "targets:" + m.group(1) + targets, open(src).read())
(out / "libSystem.tbd").write_text(system)
for alias in ("libc.tbd", "libm.tbd"):
    (out / alias).write_text(system)
def stub(name, symbols):
    listed = ", ".join(f"'{s}'" for s in symbols)
    exports = f"exports:\n  - targets:         {targets}\n    symbols:         [ {listed} ]\n" if symbols else ""
    return (f"--- !tapi-tbd\ntbd-version:     4\ntargets:         {targets}\n"
            f"install-name:    '{name}'\n{exports}...\n")
(out / "libiconv.tbd").write_text(stub("/usr/lib/libiconv.2.dylib", []))
symbols = [l.strip() for l in open(cxx) if l.strip()]
(out / "libc++.tbd").write_text(stub("/usr/lib/libc++.1.dylib", symbols))
PY

# The compiler wrapper is not something cargo watches: compile the C++
# layer afresh (a few seconds) rather than keep objects another made.
rm -rf "$work"/*-apple-darwin/debug/build/tvm-ffi-rs-*
(cd "$root" && env \
  CC_aarch64_apple_darwin="$work/bin/zig-cxx" CXX_aarch64_apple_darwin="$work/bin/zig-cxx" \
  AR_aarch64_apple_darwin="$work/bin/zig-ar" CARGO_TARGET_AARCH64_APPLE_DARWIN_LINKER="$work/bin/macos-cc" \
  CC_x86_64_apple_darwin="$work/bin/zig-cxx" CXX_x86_64_apple_darwin="$work/bin/zig-cxx" \
  AR_x86_64_apple_darwin="$work/bin/zig-ar" CARGO_TARGET_X86_64_APPLE_DARWIN_LINKER="$work/bin/macos-cc" \
  RUSTFLAGS="-D warnings" MACOSX_DEPLOYMENT_TARGET=11.0 SDKROOT="$work/sdk" \
  cargo build --locked --lib --bins --target aarch64-apple-darwin --target x86_64-apple-darwin \
  --target-dir "$work") >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "cargo build for macOS"; }
grep -q "the C++ layer was not compiled" "$work/build.log" && { cat "$work/build.log"; fail "the C++ layer was not compiled"; }
ok "built and linked for aarch64-apple-darwin and x86_64-apple-darwin (the library and tvm-ffi-inspect)"

official_dir="$("$root/tests/tools/official-wheel.sh" "$venv" "$work" --platform macosx_11_0_arm64 --python-version 3.11)" ||
  skip "could not download the official macOS wheel (log: $work/pip-wheel.log)"
"$venv/bin/python" - "$official_dir/lib/libtvm_ffi.dylib" \
  "$work/aarch64-apple-darwin/debug/libtvm_ffi.dylib" "$work/x86_64-apple-darwin/debug/libtvm_ffi.dylib" <<'PY'
import sys
import lief
def describe(path):
    b = lief.parse(path)
    ident = b.get(lief.MachO.LoadCommand.TYPE.ID_DYLIB)
    libs = [l.name for l in b.libraries if l.command == lief.MachO.LoadCommand.TYPE.LOAD_DYLIB]
    return {s.name for s in b.exported_symbols}, ident.name if ident else None, libs
official, *ours = sys.argv[1:]
want, want_id, want_libs = describe(official)
print(f"official arm64: {len(want)} exports, install name {want_id}, needs {want_libs}")
for path in ours:
    got, ident, libs = describe(path)
    arch = path.split("/")[-3]
    missing = sorted(want - got)
    print(f"{arch}: {len(got)} exports ({len(got - want)} beyond the official ones), install name {ident}, needs {libs}")
    if missing:
        sys.exit(f"FAILED: {arch} does not export {missing}")
    if ident != "@rpath/libtvm_ffi.dylib":
        sys.exit(f"FAILED: {arch}: install name {ident}")
    if sorted(libs) != ["/usr/lib/libSystem.B.dylib", "/usr/lib/libc++.1.dylib"]:
        sys.exit(f"FAILED: {arch} needs {libs}")
PY
ok "both dylibs export every symbol the official arm64 dylib exports, as @rpath/libtvm_ffi.dylib, needing only libc++ and libSystem"
echo "macos: $passed passed"
