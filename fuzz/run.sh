#!/usr/bin/env bash
# Runs the library_bin fuzz target for a bounded time (default 30 s); a crash
# fails. cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP=1 enables them on
# the stable toolchain. Installs cargo-fuzz on first use; exits 3 if it
# cannot be installed.
set -uo pipefail
seconds="${1:-30}"
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked >/dev/null 2>&1 || exit 3
fi
RUSTC_BOOTSTRAP=1 cargo fuzz run library_bin -- -max_total_time="$seconds" > ../target/fuzz.log 2>&1
rc=$?
tail -3 ../target/fuzz.log
exit $rc
