#!/usr/bin/env bash
# Downloads the official apache-tvm-ffi wheel for another platform and
# unpacks it; prints the unpacked `tvm_ffi` directory. Exits nonzero when
# pip finds no such wheel (its output in DIR/pip-wheel.log).
# usage: tests/tools/official-wheel.sh VENV DIR PIP_ARGS...
#   (PIP_ARGS choose the wheel: --platform P..., --python-version V)
set -euo pipefail
venv="$1" dir="$2"
shift 2
rm -rf "$dir/wheel" "$dir/official"
"$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$dir/wheel" "$@" "apache-tvm-ffi==0.1.15.post2" >"$dir/pip-wheel.log" 2>&1
wheel="$(ls "$dir"/wheel/apache_tvm_ffi-*.whl | head -1)"
"$venv/bin/python" -m zipfile -e "$wheel" "$dir/official"
echo "$dir/official/tvm_ffi"
