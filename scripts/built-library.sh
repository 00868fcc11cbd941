#!/usr/bin/env bash
# What install.sh and build-wheel.sh share: builds the library in a cargo
# profile (unless --no-build) and prints the directory holding it
# (target/<profile>; the dev profile's is target/debug), after checking
# the files asked for are there.
# usage: scripts/built-library.sh [--no-build] PROFILE FILE...
set -euo pipefail
build=1
[ "${1:-}" != --no-build ] || { build=0; shift; }
profile="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "$build" = 0 ] || (cd "$root" && cargo build --profile "$profile" --locked --lib >&2)
dir="$root/target/$([ "$profile" = dev ] && echo debug || echo "$profile")"
for f in "$@"; do
  [ -f "$dir/$f" ] || { echo "$dir/$f is missing: build first" >&2; exit 1; }
done
echo "$dir"
