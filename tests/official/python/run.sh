#!/usr/bin/env bash
# Runs the official Python test suite (apache-tvm-ffi 0.1.15.post2) twice:
# on the official libtvm_ffi.so and on ours swapped into a copy of the
# package, then compares them file by file (tests/official/python/report.py).
#   usage: tests/official/python/run.sh VENV OUR_LIBRARY
# Each run checks that the process maps the intended library; pytest-xdist
# isolates crashes (a crashed worker fails its test, the rest go on) and
# pytest-timeout bounds every test. Then a random sweep of hostile arguments
# over every ffi.* global runs on ours (tests/official/python/sweep_globals.py).
set -euo pipefail
venv="$(realpath "$1")"
ours_lib="$(realpath "$2")"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/suite"
mkdir -p "$work"
py="$venv/bin/python"

"$venv/bin/pip" install --quiet --disable-pip-version-check \
  pytest pytest-xdist pytest-timeout numpy ml_dtypes ninja setuptools
sdist="$("$py" "$root/tests/official/python/fetch_sdist.py" "$work")"
"$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
  "apache-tvm-ffi==0.1.15.post2" -d "$work/wheel"
rm -rf "$work/pkg-ours"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
  --target "$work/pkg-ours" "$work"/wheel/apache_tvm_ffi-*.whl
cp "$ours_lib" "$work/pkg-ours/tvm_ffi/lib/libtvm_ffi.so"
official_lib="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi/lib/libtvm_ffi.so)"

run() { # label, library, extra PYTHONPATH
  local label="$1" lib="$2" path="$3"
  (cd "$sdist/tests/python" &&
    PATH="$venv/bin:$PATH" PYTHONPATH="$path$root/tests/official/python" TVM_FFI_EXPECT_LIB="$lib" \
      timeout 1800 "$py" -m pytest -q -p no:cacheprovider -p maps_check -n 2 \
      --timeout 300 --junitxml="$work/$label.xml" -o addopts="" >"$work/$label.log" 2>&1) || true
  tail -n 1 "$work/$label.log"
}
echo "official library:"; run official "$official_lib" ""
echo "our library:"; run ours "$work/pkg-ours/tvm_ffi/lib/libtvm_ffi.so" "$work/pkg-ours:"
"$py" "$root/tests/official/python/report.py" "$work/official.xml" "$work/ours.xml"
# Random hostile arguments to every ffi.* global, through the package on our
# library: any crash fails (set -e).
for seed in 1 2 3 4 5; do
  PYTHONPATH="$work/pkg-ours" "$py" "$root/tests/official/python/sweep_globals.py" "$seed"
done
