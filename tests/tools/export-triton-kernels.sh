#!/usr/bin/env bash
# Re-exports the Triton kernels the Triton tests use (tests/data/triton/MAJOR.MINOR)
# with a Triton release from PyPI, on a machine with no GPU:
#   tests/tools/export-triton-kernels.sh [VERSION [OUT]]     (default 3.9.0)
# Triton records absolute paths in what it writes (libdevice's in the
# metadata, the cache entry's in the group file, the kernels' source file
# and its own library's in the TTIR and the cubin's line table), so the
# venv, the cache and a copy
# of the kernels' source (triton_kernels.py, beside this script) live at
# fixed paths under /tmp/tvm-ffi-rs-triton/VERSION: the files are then the
# same bytes on every machine (the copy's time fixed too).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
version="${1:-3.9.0}"
out="$(realpath -m "${2:-$root/tests/data/triton/${version%.*}}")"
work="/tmp/tvm-ffi-rs-triton/$version"
venv="$work/venv"
if ! "$venv/bin/python" -c "import triton, numpy, typing_extensions" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "triton==$version" numpy typing_extensions
fi
rm -rf "$work/cache"
mkdir -p "$out"
cp "$root/tests/tools/triton_kernels.py" "$work/triton_kernels.py"
# Releases before 3.3 record the source's time in the cubin's line table.
touch -d @1767225600 "$work/triton_kernels.py"
TRITON_KERNELS_DIR="$work" TRITON_CACHE_DIR="$work/cache" TRITON_DEFAULT_FP_FUSION=1 "$venv/bin/python" \
  "$root/tests/tools/export-triton-kernels.py" "$out"
