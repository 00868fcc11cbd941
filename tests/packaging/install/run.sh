#!/usr/bin/env bash
# Installs tvm-ffi-rs into a fresh prefix (scripts/install.sh, with the
# reference's C++ headers fetched from the pinned wheel) and builds against
# it: a C program three ways (pkg-config, CMake find_package(tvm_ffi) with
# tvm_ffi::shared, the static library) and C++ through find_package (a
# library exporting a typed function, a host loading it through the C++
# API), and Rust through the official tvm-ffi crate, whose build finds the
# install's tvm-ffi-config; each runs and checks which library the process
# mapped. Also checks tvm-ffi-config's answers.
# usage: tests/packaging/install/run.sh VENV [PROFILE]   (VENV has cmake and pkgconf;
#        PROFILE: the cargo profile already built, default release)
set -euo pipefail
venv="$1"
profile="${2:-release}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/install-test"
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"
# The library the test command built already (building it again here would
# resolve other features than the tests and rebuild the crate twice).
"$root/scripts/install.sh" --prefix "$prefix" --profile "$profile" --no-build --with-cxx-headers >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
(cd "$prefix" && find . -type f ! -path './include/tvm/ffi/*' | sort) | sed 's/^/  installed: /'
echo "  installed: $(find "$prefix/include/tvm/ffi" -type f | wc -l) headers under include/tvm/ffi"
passed=0

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg_config="$venv/bin/pkgconf"
# shellcheck disable=SC2046
gcc -O1 "$root/tests/packaging/install/check.c" $("$pkg_config" --cflags --libs tvm_ffi) -Wl,-rpath,"$prefix/lib" -o "$work/check_pkgconfig"
"$work/check_pkgconfig" "$prefix/lib/libtvm_ffi.so" | sed 's/^/  pkg-config: /'
passed=$((passed + 1))

"$venv/bin/cmake" -S "$root/tests/packaging/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; exit 1; }
"$venv/bin/cmake" --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
"$work/cmake/check" "$prefix/lib/libtvm_ffi.so" | sed 's/^/  cmake: /'
passed=$((passed + 1))

# The static library needs the C++ runtime, as tvm_ffi.pc's Libs.private says.
# shellcheck disable=SC2046
gcc -O1 "$root/tests/packaging/install/check.c" $("$pkg_config" --cflags tvm_ffi) "$prefix/lib/libtvm_ffi.a" \
  $("$pkg_config" --static --libs-only-l tvm_ffi | sed 's/-ltvm_ffi//') -o "$work/check_static"
"$work/check_static" static | sed 's/^/  static: /'
passed=$((passed + 1))

"$venv/bin/cmake" -S "$root/tests/packaging/install/cxx" -B "$work/cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cxx.log" 2>&1 ||
  { cat "$work/cxx.log"; exit 1; }
"$venv/bin/cmake" --build "$work/cxx" >>"$work/cxx.log" 2>&1 || { cat "$work/cxx.log"; exit 1; }
"$work/cxx/host" "$work/cxx/libadd_one.so" "$prefix/lib/libtvm_ffi.so" | sed 's/^/  c++: /'
passed=$((passed + 1))

# Rust: the official tvm-ffi crate (crates.io, pinned by the lock file)
# finds the library through the installed tvm-ffi-config on PATH; at run
# time through LD_LIBRARY_PATH, as the crate documents.
PATH="$prefix/bin:$PATH" CARGO_TARGET_DIR="$root/target/install-rust" \
  cargo build --quiet --release --locked --manifest-path "$root/tests/packaging/install/rust/Cargo.toml"
LD_LIBRARY_PATH="$prefix/lib" "$root/target/install-rust/release/install-check-rust" \
  "$prefix/lib/libtvm_ffi.so" | sed 's/^/  rust: /'
passed=$((passed + 1))

config="$prefix/bin/tvm-ffi-config"
[ "$("$config" --includedir)" = "$prefix/include" ]
[ "$("$config" --libfiles)" = "$prefix/lib/libtvm_ffi.so" ]
[ "$("$config" --libdir)" = "$prefix/lib" ]
[ "$("$config" --libs)" = "-ltvm_ffi" ]
[ "$("$config" --cmakedir)" = "$prefix/lib/cmake/tvm_ffi" ]
[ "$("$config" --ldflags)" = "-L$prefix/lib" ]
echo "  tvm-ffi-config: $("$config" --cflags)"
passed=$((passed + 1))
echo "install: $passed passed"
