#!/usr/bin/env bash
# Builds tvm-ffi-rs (release) and installs it under a prefix, laid out like
# the reference's install:
#   PREFIX/include/tvm/ffi/...          our generated C headers
#   PREFIX/include/dlpack/dlpack.h
#   PREFIX/lib/libtvm_ffi.so            soname libtvm_ffi.so, debug info stripped
#   PREFIX/lib/libtvm_ffi.a             (needs the C++ runtime: see the .pc file)
#   PREFIX/lib/pkgconfig/tvm_ffi.pc     pkg-config --cflags --libs tvm_ffi
#   PREFIX/lib/cmake/tvm_ffi/           find_package(tvm_ffi CONFIG): tvm_ffi::header, tvm_ffi::shared
#   PREFIX/bin/tvm-ffi-config           the reference's flags (--includedir --libfiles ...)
# usage: scripts/install.sh --prefix PREFIX [--profile NAME] [--no-build] [--with-cxx-headers [WHEEL]]
#   --profile NAME      the cargo profile to build and install (default release;
#                       the test command uses `testing`)
#   --no-build          install what target/<profile> holds (built already)
#   --with-cxx-headers  also the reference's C++ headers (the C++ half of the
#                       ABI), from the pinned official wheel (downloaded with
#                       pip unless WHEEL is given), with its LICENSE and NOTICE
set -euo pipefail
prefix=""
profile=release
build=1
cxx=0
wheel=""
# The reference version whose ABI we implement (and whose C++ headers match).
reference="apache-tvm-ffi==0.1.15.post2"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --profile) profile="${2:?--profile needs a name}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --with-cxx-headers)
      cxx=1
      if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then wheel="$2"; shift; fi
      shift ;;
    -h | --help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (usage: scripts/install.sh --prefix PREFIX)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "usage: scripts/install.sh --prefix PREFIX" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
no_build=""
[ "$build" = 1 ] || no_build=--no-build
built="$("$root/scripts/built-library.sh" $no_build "$profile" libtvm_ffi.so libtvm_ffi.a)"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/tvm_ffi" "$prefix/bin"
cp -R "$root/include/tvm" "$root/include/dlpack" "$prefix/include/"
# Debug info stays in target/; the installed files carry none.
objcopy --strip-debug "$built/libtvm_ffi.so" "$prefix/lib/libtvm_ffi.so"
objcopy --strip-debug "$built/libtvm_ffi.a" "$prefix/lib/libtvm_ffi.a"

if [ "$cxx" = 1 ]; then
  fetched="$(mktemp -d)"
  trap 'rm -rf "$fetched"' EXIT
  if [ -z "$wheel" ]; then
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      -d "$fetched" "$reference"
    wheel="$(ls "$fetched"/*.whl)"
  fi
  # The C++ headers only: the C headers (c_api.h, extra/c_env_api.h,
  # dlpack.h) are ours, generated from this library.
  python3 - "$wheel" "$prefix" <<'PY'
import pathlib, sys, zipfile
wheel, prefix = sys.argv[1], pathlib.Path(sys.argv[2])
ours = {"tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h", "dlpack/dlpack.h"}
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("tvm_ffi/include/"):
            rel = name[len("tvm_ffi/include/"):]
            if not rel or rel.endswith("/") or rel in ours:
                continue
            dest = prefix / "include" / rel
        elif "/licenses/" in name and name.rsplit("/", 1)[-1] in ("LICENSE", "NOTICE"):
            dest = prefix / "share" / "doc" / "tvm_ffi" / "cxx-headers" / name.rsplit("/", 1)[-1]
        else:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(z.read(name))
PY
fi

cat >"$prefix/lib/pkgconfig/tvm_ffi.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: tvm_ffi
Description: TVM-FFI stable C ABI (tvm-ffi-rs, a Rust implementation)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -ltvm_ffi
# Linking libtvm_ffi.a (pkg-config --static) also needs the C++ runtime.
Libs.private: -lstdc++ -lpthread -ldl -lm
PC

cat >"$prefix/lib/cmake/tvm_ffi/tvm_ffi-config.cmake" <<'CMAKE'
# find_package(tvm_ffi CONFIG) for tvm-ffi-rs: the reference's target names.
#   tvm_ffi::header  the include directories (C headers and dlpack)
#   tvm_ffi::shared  libtvm_ffi.so with those include directories
get_filename_component(_tvm_ffi_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(tvm_ffi_INCLUDE_DIR "${_tvm_ffi_prefix}/include")
set(tvm_ffi_DLPACK_INCLUDE_DIR "${_tvm_ffi_prefix}/include")
set(tvm_ffi_LIB_FILES "${_tvm_ffi_prefix}/lib/libtvm_ffi.so")
if(NOT TARGET tvm_ffi::header)
  add_library(tvm_ffi::header INTERFACE IMPORTED)
  set_target_properties(tvm_ffi::header PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${tvm_ffi_INCLUDE_DIR}")
endif()
if(NOT TARGET tvm_ffi::shared)
  add_library(tvm_ffi::shared SHARED IMPORTED)
  set_target_properties(tvm_ffi::shared PROPERTIES
    IMPORTED_LOCATION "${tvm_ffi_LIB_FILES}"
    IMPORTED_SONAME "libtvm_ffi.so"
    INTERFACE_INCLUDE_DIRECTORIES "${tvm_ffi_INCLUDE_DIR}")
endif()
# The reference's C++ headers (installed with --with-cxx-headers) need C++17.
get_property(_tvm_ffi_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if("CXX" IN_LIST _tvm_ffi_languages)
  set_property(TARGET tvm_ffi::header tvm_ffi::shared PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_17)
endif()
unset(_tvm_ffi_languages)
unset(_tvm_ffi_prefix)
CMAKE

cat >"$prefix/lib/cmake/tvm_ffi/tvm_ffi-config-version.cmake" <<CMAKE
# The version of tvm-ffi-rs; compatible with requests of the same major.minor.
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE

cat >"$prefix/bin/tvm-ffi-config" <<'SH'
#!/bin/sh
# The build flags of this tvm-ffi-rs install, as the reference's
# tvm-ffi-config prints them (one answer per line, in argument order).
prefix="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -gt 0 ] || set -- --help
for arg in "$@"; do
  case "$arg" in
    --includedir | --dlpack-includedir) echo "$prefix/include" ;;
    --libdir) echo "$prefix/lib" ;;
    --libfiles) echo "$prefix/lib/libtvm_ffi.so" ;;
    --libs) echo "-ltvm_ffi" ;;
    --cflags) echo "-I$prefix/include -I$prefix/include" ;;
    --cxxflags) echo "-I$prefix/include -I$prefix/include -std=c++17" ;;
    --ldflags) echo "-L$prefix/lib" ;;
    --cmakedir) echo "$prefix/lib/cmake/tvm_ffi" ;;
    -h | --help)
      echo "usage: tvm-ffi-config [--includedir] [--dlpack-includedir] [--libdir] [--libfiles] [--libs]"
      echo "                      [--cflags] [--cxxflags] [--ldflags] [--cmakedir]" ;;
    *) echo "tvm-ffi-config: unknown option $arg" >&2; exit 2 ;;
  esac
done
SH
chmod +x "$prefix/bin/tvm-ffi-config"
echo "installed tvm-ffi-rs $version into $prefix"
