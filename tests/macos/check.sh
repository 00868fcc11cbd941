#!/usr/bin/env bash
# macOS, first step: `cargo check` of the library and the inspector for
# aarch64-apple-darwin and x86_64-apple-darwin, from Linux. Installs what it
# needs when missing: the two Rust targets (rustup) and clang (apt; the
# stacker crate assembles its stack switch for the target).
# What is not checked here, for want of Apple's SDK: the C++ layer
# (build.rs says so and skips it), and the tests, examples and benches
# (criterion's `alloca` compiles C against the SDK's headers).
# usage: tests/macos/check.sh     Prints "macos-check: N passed" or "skipped".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$root/target/macos-check"
mkdir -p "$work"
skip() { echo "macos-check: skipped ($1)"; exit 0; }
if ! command -v clang >/dev/null; then
  "$root/tests/tools/apt-install.sh" "$work/apt.log" clang || skip "could not install clang (log: $work/apt.log)"
fi
passed=0
for triple in aarch64-apple-darwin x86_64-apple-darwin; do
  rustup target list --installed 2>/dev/null | grep -qx "$triple" ||
    rustup target add "$triple" >"$work/rustup.log" 2>&1 || skip "rustup could not add $triple"
  var="${triple//-/_}"
  # Warnings fail too: a piece left unused outside Linux shows here.
  if ! (cd "$root" && env "CC_$var=clang" "CXX_$var=clang++" RUSTFLAGS="-D warnings" \
    cargo check --locked --lib --bins --target "$triple" --target-dir "$work") >"$work/$triple.log" 2>&1; then
    cat "$work/$triple.log"
    echo "FAILED: cargo check --target $triple"
    exit 1
  fi
  echo "ok: cargo check --lib --bins --target $triple"
  passed=$((passed + 1))
done
echo "macos-check: $passed passed"
