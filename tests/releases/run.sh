#!/usr/bin/env bash
# Every published apache-tvm-ffi release on our library, as a user puts it
# there: each release's own wheel unpacked as is, with only
# tvm_ffi/lib/libtvm_ffi.so replaced.
#   1. every release (RELEASES): the package imports with its own library,
#      with the official latest (0.1.15.post2) and with ours, and its
#      compiled testing library answers the same on ours as on its own
#      (tests/releases/testing_globals.py: each testing.* global, its
#      metadata, calls with small arguments);
#   2. the chosen releases (SUITES): their own test suite (the sdist's
#      tests/python) on their own library and on ours; a test that passes
#      on the release's own library and not on ours fails the stage, unless
#      tests/releases/known.txt names it with the row of docs/differences.md
#      that says why (tests/releases/compare.py).
# Prints the table of docs/releases.md, then "releases: N passed".
# Wheels and sources are cached under target/releases.
# usage: tests/releases/run.sh VENV OUR_LIBRARY
set -euo pipefail
venv="$(realpath "$1")"
ours_lib="$(realpath "$2")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/releases"
py="$venv/bin/python"
RELEASES=(0.1.0 0.1.1 0.1.2 0.1.3 0.1.4 0.1.5 0.1.6 0.1.7 0.1.8.post0 0.1.8.post1 0.1.8.post2
  0.1.9 0.1.10 0.1.11 0.1.12 0.1.13.post2 0.1.13.post3 0.1.14.post0 0.1.14.post1 0.1.15.post1
  0.1.15.post2)
SUITES=(0.1.0 0.1.4 0.1.8.post2 0.1.11 0.1.14.post1)
# TVM_FFI_RELEASES and TVM_FFI_RELEASE_SUITES (space-separated) narrow them
# for a quick look.
[ -z "${TVM_FFI_RELEASES+set}" ] || read -r -a RELEASES <<<"$TVM_FFI_RELEASES"
[ -z "${TVM_FFI_RELEASE_SUITES+set}" ] || read -r -a SUITES <<<"$TVM_FFI_RELEASE_SUITES"
latest_lib="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi/lib/libtvm_ffi.so)"
mkdir -p "$work/wheels" "$work/src"
passed=0
fail() { echo "FAILED: $1"; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  pytest pytest-xdist pytest-timeout numpy ml_dtypes ninja setuptools

# The release's package, unpacked from its wheel as is (its own library):
# $work/VERSION/own.
own_package() {
  local version="$1" dir="$work/$1/own" wheel
  if [ ! -d "$dir/tvm_ffi" ]; then
    wheel="$(ls "$work/wheels"/apache_tvm_ffi-"$version"-cp3*.whl 2>/dev/null || true)"
    if [ -z "$wheel" ]; then
      "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
        "apache-tvm-ffi==$version" -d "$work/wheels" >&2
      wheel="$(ls "$work/wheels"/apache_tvm_ffi-"$version"-cp3*.whl)"
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    "$py" -m zipfile -e "$wheel" "$dir"
  fi
  echo "$dir"
}
# The same package with LIBRARY as its libtvm_ffi.so: $work/VERSION/SIDE.
# Hard links where they can be (42 copies of the packages and the two
# libraries would take 1 GB); the package's own library is unlinked first,
# never written through.
with_library() { # version side library
  local dir="$work/$1/$2" lib
  rm -rf "$dir"
  cp -al "$work/$1/own" "$dir" 2>/dev/null || { rm -rf "$dir" && cp -a "$work/$1/own" "$dir"; }
  lib="$dir/tvm_ffi/lib/libtvm_ffi.so"
  rm -f "$lib"
  ln "$3" "$lib" 2>/dev/null || cp "$3" "$lib"
  echo "$dir"
}
# "yes", or why `import tvm_ffi` failed (its last line).
imports() { # package dir
  if (cd "$work" && PYTHONPATH="$1" "$py" -c 'import tvm_ffi, tvm_ffi.testing' >"$1.import.log" 2>&1); then
    echo yes
  else
    echo "no: $(grep -v '^ ' "$1.import.log" | tail -n 1 | sed -e "s|$work/[^ ]*/||" -e 's/: /, /g' | cut -c1-90)"
  fi
}

table=("| release | own library | official latest | ours | testing library on ours | suite on ours |"
  "| --- | --- | --- | --- | --- | --- |")
for version in "${RELEASES[@]}"; do
  own="$(own_package "$version")"
  latest="$(with_library "$version" latest "$latest_lib")"
  ours="$(with_library "$version" ours "$ours_lib")"
  # Its own library and ours: the testing library's transcript imports the
  # package (its failure is the import's); the official latest: an import,
  # and the transcript only where its answer decides (ours differs from own).
  for side in own ours; do
    (cd "$work" && PYTHONPATH="$work/$version/$side" timeout 300 "$py" "$here/testing_globals.py" \
      2>"$work/$version/$side.import.log") >"$work/$version/globals-$side.txt" ||
      fail "$version does not run on its $side library: $(tail -n 3 "$work/$version/$side.import.log")"
  done
  own_imports=yes ours_imports=yes
  latest_imports="$(imports "$latest")"
  latest_globals=-
  if [ "$latest_imports" = yes ] && ! cmp -s "$work/$version/globals-own.txt" "$work/$version/globals-ours.txt"; then
    latest_globals="$work/$version/globals-latest.txt"
    (cd "$work" && PYTHONPATH="$latest" timeout 300 "$py" "$here/testing_globals.py" 2>/dev/null) >"$latest_globals"
  fi
  answers="$("$py" "$here/compare_globals.py" "$work/$version/globals-own.txt" "$latest_globals" \
    "$work/$version/globals-ours.txt")" ||
    { echo "$answers"; fail "$version: its testing library answers differently on ours"; }
  suite="-"
  if [[ " ${SUITES[*]} " == *" $version "* ]]; then
    sdist="$("$py" "$root/tests/official/python/fetch_sdist.py" "$work/src" "$version")"
    for side in own ours; do
      dir="$work/$version/$side"
      (cd "$sdist/tests/python" &&
        PATH="$venv/bin:$PATH" PYTHONPATH="$dir:$root/tests/official/python" \
          TVM_FFI_EXPECT_LIB="$dir/tvm_ffi/lib/libtvm_ffi.so" \
          timeout 900 "$py" -m pytest -q -p no:cacheprovider -p maps_check -n 2 --timeout 300 \
          --junitxml="$work/$version/suite-$side.xml" -o addopts="" >"$work/$version/suite-$side.log" 2>&1) || true
    done
    compare=("$version" "$work/$version/suite-own.xml" "$work/$version/suite-ours.xml" "$here/known.txt")
    rm -f "$work/$version/suite-again.xml"
    mapfile -t again < <("$py" "$here/compare.py" --lost "${compare[@]}")
    if [ ${#again[@]} -gt 0 ]; then
      (cd "$sdist/tests/python" &&
        PATH="$venv/bin:$PATH" PYTHONPATH="$work/$version/ours:$root/tests/official/python" \
          TVM_FFI_EXPECT_LIB="$work/$version/ours/tvm_ffi/lib/libtvm_ffi.so" \
          timeout 900 "$py" -m pytest -q -p no:cacheprovider -p maps_check --timeout 300 \
          --junitxml="$work/$version/suite-again.xml" -o addopts="" "${again[@]}" \
          >"$work/$version/suite-again.log" 2>&1) || true
    fi
    suite="$("$py" "$here/compare.py" "${compare[@]}" "$work/$version/suite-again.xml")" ||
      { echo "$suite"; fail "$version: its suite loses tests on ours"; }
  fi
  table+=("| $version | $own_imports | $latest_imports | $ours_imports | $answers | $suite |")
  passed=$((passed + 1))
done
printf '%s\n' "${table[@]}" | tee "$work/table.md"
echo "releases: $passed passed"
