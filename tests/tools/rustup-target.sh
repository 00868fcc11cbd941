#!/usr/bin/env bash
# Adds a Rust target to the toolchain when it is missing, one rustup at a
# time (stages run side by side; rustup does not lock its toolchain).
# Exits 0 when the target is installed, else rustup's status, with rustup's
# output in LOG.
# usage: tests/tools/rustup-target.sh LOG TRIPLE...
set -uo pipefail
log="$1"
shift
source "$(dirname "${BASH_SOURCE[0]}")/one-at-a-time.sh"
one_at_a_time rustup
: >"$log"
for triple in "$@"; do
  rustup target list --installed 2>/dev/null | grep -qx "$triple" ||
    rustup target add "$triple" >>"$log" 2>&1 9>&- || exit
done
