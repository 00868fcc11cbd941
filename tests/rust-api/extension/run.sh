#!/usr/bin/env bash
# The Rust extension and host examples (examples/rust_extension,
# examples/rust_host), written with tvmffi and no `unsafe`:
#   - the extension builds as a cdylib exporting only its author's symbols
#     (__tvm_ffi_<name> and their docs and schemas), with no libtvm_ffi
#     dependency and no runtime inside;
#   - the official Python package loads it on the official library and on
#     ours with identical transcripts (tests/rust-api/extension/transcript.py:
#     results, docs, schemas, repr, structural equality, a JSON graph round
#     trip, keyword construction, field writes, error kinds and messages,
#     a panic);
#   - loaded where no runtime is, dlopen refuses it (even RTLD_LAZY); built with the runtime
#     inside (a dependency on tvmffi-host by mistake) and loaded into a
#     process that has one, its calls fail with the "two TVM-FFI runtimes" error;
#   - `cargo build --workspace` (hosts and extensions in one build) leaves
#     every extension without a runtime: no TVMFFI* definitions;
#   - tvmffi's and tvmffi-host's tests and doctests pass, their docs build
#     without a warning; the extension's own `cargo test` passes (the
#     runtime linked into the test program by a dev-dependency);
#   - the host example (Rust-author tasks 2-5) prints what
#     tests/rust-api/extension/host.expected holds.
# Usage: run.sh VENV OUR_LIBRARY. Prints "rust-extension: N passed".
set -euo pipefail
venv="$(cd "$1" && pwd)"
lib="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/target/rust-extension"
mkdir -p "$out"
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAILED: $1"; exit 1; }
cd "$root"

# Debug builds in the rlib dependent's target directory, whose runtime rlib
# (tests/packaging/rust-dependent, built just before) they reuse.
export CARGO_TARGET_DIR="$root/target/rust-dependent"
built="$CARGO_TARGET_DIR/debug"
cargo build --locked --quiet -p rust-extension-example --features runtime-inside-by-mistake
cp "$built/librust_ext.so" "$out/librust_ext_with_runtime.so"
# Hosts and extensions in one build, as a workspace builds them.
cargo build --locked --quiet --workspace --exclude tvm-ffi-rs
for so in librust_ext.so libtask1_ours.so; do
  defined="$(nm -D --defined-only "$built/$so" | awk '$3 ~ /^TVMFFI/' | wc -l)"
  [ "$defined" = 0 ] || fail "cargo build --workspace put a runtime into $so ($defined TVMFFI* definitions)"
done
ok "cargo build --workspace: the extensions built beside the hosts define no TVMFFI* symbol"
ext="$out/librust_ext.so"
cp "$built/librust_ext.so" "$ext"

cargo test --locked -p tvmffi -p tvmffi-host > "$out/tvmffi-test.log" 2>&1 \
  || { cat "$out/tvmffi-test.log"; fail "cargo test -p tvmffi -p tvmffi-host"; }
grep "^test result" "$out/tvmffi-test.log"
ok "tvmffi's and tvmffi-host's own tests and doctests"
cargo test --locked -p rust-extension-example > "$out/extension-test.log" 2>&1 \
  || { cat "$out/extension-test.log"; fail "cargo test -p rust-extension-example"; }
grep "^test result" "$out/extension-test.log"
ok "the extension's own cargo test (tvmffi-host as its dev-dependency)"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --quiet --no-deps -p tvmffi -p tvmffi-host -p tvmffi-macros
ok "cargo doc of tvmffi, tvmffi-host and tvmffi-macros: no warnings"

grep -rnw unsafe examples/rust_extension/src examples/rust_host/src && fail "unsafe in the examples"
ok "no unsafe in the examples (and #![forbid(unsafe_code)] through their lints)"

exports="$(nm -D --defined-only "$ext" | awk '{ print $3 }')"
strays="$(echo "$exports" | grep -v '^__tvm_ffi_' || true)"
[ -z "$strays" ] || fail "the extension exports more than its functions: $strays"
[ "$(echo "$exports" | grep -c '^__tvm_ffi_[a-z]')" = 11 ] || fail "expected 11 functions in: $exports"
needed="$(readelf -d "$ext" | awk '/NEEDED/ { print $5 }' | tr -d '[]' | tr '\n' ' ')"
case "$needed" in *tvm_ffi*) fail "the extension depends on a libtvm_ffi: $needed" ;; esac
strip -o "$out/stripped.so" "$ext"
ok "exports: $(echo "$exports" | wc -l) symbols, all __tvm_ffi_*; needs only $needed; $(($(stat -c %s "$out/stripped.so") / 1024)) KiB stripped (debug build)"

official="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi)"
"$venv/bin/python" "$here/transcript.py" "$ext" > "$out/official.txt" 2>"$out/official.err" \
  || { cat "$out/official.err"; fail "the transcript on the official library"; }
PYTHONPATH="$root/target/suite/pkg-ours" "$venv/bin/python" "$here/transcript.py" "$ext" > "$out/ours.txt" \
  2>"$out/ours.err" || { cat "$out/ours.err"; fail "the transcript on our library"; }
cmp -s "$(echo "$root"/target/suite/pkg-ours/tvm_ffi/lib/libtvm_ffi.so)" "$lib" \
  || fail "target/suite/pkg-ours does not hold $lib"
diff -u "$out/official.txt" "$out/ours.txt" || fail "the transcripts differ"
for line in "add_one(41): int 42" "round trip equal: True" "structural_equal(p, q): True" \
  "saxpy result: shape (2, 3) dtype float32 values [[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]]" \
  "Point(1, label='d') (default y): Point rust_ext.Point(x=1, y=0.5, label=\"d\")" \
  "fail(7): raised ValueError: failed with code 7" "fail(7) traceback names lib.rs: True" \
  "fail(7) traceback's Rust frames: ['File \"examples/rust_extension/src/lib.rs\", line 146, in rust_ext::fail']" \
  "panics('boom'): raised RuntimeError: panic in \`panics\`: boom" "add_one(1) after the panic: int 2" \
  "global rust_ext.hello('tvm'): String 'hello tvm, from Rust'" \
  "y after add_one_into: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]" "x untouched: [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]" \
  "add_one_into(x, y of shape (3, 2)): raised ValueError: argument \`y\` has shape [3, 2], expected [2, 3]" \
  "locate(CUDA tensor) on stream 0x5eed: String 'data 0x7f0000001100 on device (2, 0), shape [2, 3], strides Some([3, 1]), dtype float32, stream 0x5eed'"; do
  grep -qxF "$line" "$out/official.txt" || fail "the transcript lacks: $line"
done
ok "transcripts on the official library and on ours are identical ($(wc -l < "$out/ours.txt") lines)"

refusal="$(python3 -c 'import ctypes, os, sys
try:
    ctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY)
except OSError as e:
    print(e)' "$ext")"
case "$refusal" in *"undefined symbol: TVMFFI"*) ;; *) fail "loaded without a runtime: $refusal" ;; esac
ok "dlopen refuses it in a process without a runtime (undefined symbol: ${refusal##*undefined symbol: })"

mixed="$("$venv/bin/python" -c 'import sys, tvm_ffi
try:
    print(tvm_ffi.load_module(sys.argv[1]).add_one(1))
except Exception as e:
    print(type(e).__name__, e)' "$out/librust_ext_with_runtime.so" 2>/dev/null)"
case "$mixed" in "RuntimeError two TVM-FFI runtimes in one process: "*) ;; *) fail "mixed runtimes: $mixed" ;; esac
ok "an extension with the runtime inside, in a process with another: $mixed"

"$built/rust-host-example" "$ext" > "$out/host.txt"
diff -u "$here/host.expected" "$out/host.txt" || fail "the host example's output changed"
ok "the host example (a global from a closure, an object type, a tensor through DLPack, a module)"
echo "rust-extension: $passed passed"
