#!/usr/bin/env bash
# Builds the wheel (scripts/build-wheel.sh) and installs it with pip into a
# fresh venv, then imports tvm_ffi, calls a global and checks that the
# process mapped exactly the installed library and that it is ours (it has
# our artifact API), and that pip and tvm-ffi-config say so.
# usage: tests/packaging/wheel/run.sh [PROFILE]   (the cargo profile already built,
#                                      default release)
set -euo pipefail
profile="${1:-release}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$root/target/wheel-test"
rm -rf "$work"
mkdir -p "$work"
# The library the test command built already.
wheel="$("$root/scripts/build-wheel.sh" --out "$work/dist" --profile "$profile" --no-build | tail -1)"
echo "  built: $(basename "$wheel")"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
echo "  pip: $("$work/venv/bin/pip" show apache-tvm-ffi 2>/dev/null | grep '^Version:')"
"$work/venv/bin/python" - <<'PY'
import ctypes
import tvm_ffi

s = tvm_ffi.get_global_func("ffi.String")("through the wheel")
mapped = sorted({line.split(None, 5)[5].strip() for line in open("/proc/self/maps")
                 if line.rstrip().endswith("/libtvm_ffi.so")})
expected = str(tvm_ffi.libinfo.find_libtvm_ffi())
assert mapped == [expected], (mapped, expected)
assert hasattr(ctypes.CDLL(expected), "TVMFFIArtifactCreate"), "not our library"
print(f"  import, call: {s!r}; mapped exactly {expected.split('site-packages/')[1]}, ours")
PY
libfiles="$("$work/venv/bin/tvm-ffi-config" --libfiles)"
case "$libfiles" in "$work/venv/"*) ;; *) echo "tvm-ffi-config --libfiles: $libfiles"; exit 1 ;; esac
echo "  tvm-ffi-config --libfiles: ${libfiles#"$work/"}"
echo "wheel: 1 passed"
