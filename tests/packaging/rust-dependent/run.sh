#!/usr/bin/env bash
# A Rust crate depending on tvm-ffi-rs (package tvm-ffi-rs-rlib, library
# tvm_ffi): builds it (its lock file pins every version), runs it, and checks
#   - the build prints no warning (cargo replays cached ones),
#   - the build produced no libtvm_ffi.so and no libtvm_ffi.a (a dependent
#     pays for neither),
#   - src/main.rs is docs/rust.md's snippet, word for word,
#   - the library's docs build without a warning.
# Prints "rust-dependent: N passed".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
target="$root/target/rust-dependent"
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }

# The linkers stage of tests/run-all.sh builds the C library into this
# target directory afterwards (to reuse its dependencies): what an earlier
# run left there is not this build's.
find "$target" \( -name libtvm_ffi.so -o -name libtvm_ffi.a \) -delete 2>/dev/null || true
mkdir -p "$target"
CARGO_TARGET_DIR="$target" cargo build --locked --manifest-path "$here/Cargo.toml" 2> "$target/build.log" \
  || { cat "$target/build.log"; exit 1; }
if grep -i "warning" "$target/build.log"; then echo "FAILED: the dependent's build warns"; exit 1; fi
out="$("$target/debug/rust-dependent")"
echo "$out"
[ "$out" = "demo.add(40, 2) = 42
demo.add(1.5, 2): TypeError: demo.add takes two ints" ] || { echo "FAILED: unexpected output"; exit 1; }
ok "the snippet builds against tvm-ffi-rs-rlib without a warning and runs"

made="$(find "$target" -name libtvm_ffi.so -o -name libtvm_ffi.a | head -5)"
[ -z "$made" ] || { echo "FAILED: the dependent's build made C library files: $made"; exit 1; }
ok "no libtvm_ffi.so or libtvm_ffi.a in the dependent's build ($(du -sm "$target" | cut -f1) MB)"

python3 - "$here/src/main.rs" "$root/docs/rust.md" <<'PY'
import sys
snippet = open(sys.argv[1]).read()
readme = open(sys.argv[2]).read()
if "```rust\n" + snippet + "```\n" not in readme:
    sys.exit("FAILED: docs/rust.md's snippet differs from tests/packaging/rust-dependent/src/main.rs")
PY
ok "docs/rust.md's rlib snippet is tests/packaging/rust-dependent/src/main.rs"

RUSTDOCFLAGS="-D warnings" CARGO_TARGET_DIR="$target" cargo doc --locked --quiet --no-deps \
  --manifest-path "$here/Cargo.toml" -p tvm-ffi-rs-rlib
ok "cargo doc: no warnings"
echo "rust-dependent: $passed passed"
