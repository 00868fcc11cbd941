#!/usr/bin/env bash
# Runs the official C++ unit tests (apache-tvm-ffi 0.1.15.post2's tests/cpp,
# gtest) on the official libtvm_ffi.so and on ours, and compares them file by
# file (tests/official/cpp/report.py): a test that passes on the official library
# must pass on ours.
#   usage: tests/official/cpp/run.sh VENV OUR_LIBRARY
set -euo pipefail
venv="$(realpath "$1")"
ours_lib="$(realpath "$2")"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/cxx-suite"
py="$venv/bin/python"

# gtest: the system's; else Debian's package installed (as root, or with
# sudo); else, with neither, the package unpacked under target/ (apt-get
# download and dpkg -x need no root).
gtest_prefix=""
if [ ! -f /usr/include/gtest/gtest.h ]; then
  mkdir -p "$work"
  "$root/tests/tools/apt-install.sh" "$work/apt.log" libgtest-dev || true
  if [ ! -f /usr/include/gtest/gtest.h ]; then
    deb="$root/target/gtest-deb"
    rm -rf "$deb" && mkdir -p "$deb"
    (cd "$deb" && apt-get download libgtest-dev >/dev/null 2>&1 && dpkg -x libgtest-dev_*.deb root)
    gtest_prefix="$deb/root/usr"
  fi
fi
sdist="$("$py" "$root/tests/official/python/fetch_sdist.py" "$root/target/suite")"
official_dir="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi)"
"$venv/bin/cmake" -S "$root/tests/official/cpp" -B "$work" -DSUITE_DIR="$sdist" \
  -DOFFICIAL_DIR="$official_dir" -DOUR_LIBRARY="$ours_lib" \
  ${gtest_prefix:+-DCMAKE_PREFIX_PATH="$gtest_prefix"} >/dev/null
"$venv/bin/cmake" --build "$work" -j2 >/dev/null

for variant in official ours; do
  rm -f "$work/$variant.json"
  # A crash leaves no report; report.py then counts every test as failed.
  (cd "$work/$variant" && timeout 900 ./tvm_ffi_tests --gtest_brief=1 \
    --gtest_output="json:$work/$variant.json" >"$work/$variant.log" 2>&1) ||
    echo "$variant: the test binary exited with $? (log: $work/$variant.log)"
done
"$py" "$root/tests/official/cpp/report.py" "$work/official.json" "$work/ours.json"
