#!/usr/bin/env bash
# Writes one wheel into DIR that installs the official `tvm_ffi` Python
# package running on our library: the pinned official wheel for this Python
# (pip download) repacked with our libtvm_ffi.so (release, debug info
# stripped) under the local version 0.1.15.post2+rs<our version>.
#   pip install DIR/apache_tvm_ffi-*.whl     (any venv of the same Python)
# usage: scripts/build-wheel.sh --out DIR [--python PYTHON] [--profile NAME] [--no-build]
#   --profile NAME  the cargo profile to build and take the library from
#                   (default release; the test command uses `testing`)
set -euo pipefail
out=""
profile=release
python=python3
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --python) python="${2:?--python needs an interpreter}"; shift 2 ;;
    --profile) profile="${2:?--profile needs a name}"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-wheel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "usage: scripts/build-wheel.sh --out DIR" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
no_build=""
[ "$build" = 1 ] || no_build=--no-build
lib="$("$root/scripts/built-library.sh" $no_build "$profile" libtvm_ffi.so)/libtvm_ffi.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$lib" "$work/libtvm_ffi.so"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$work/official" "apache-tvm-ffi==0.1.15.post2"
"$python" "$root/scripts/repack_wheel.py" "$work"/official/*.whl "$work/libtvm_ffi.so" "$out" "rs$version"
