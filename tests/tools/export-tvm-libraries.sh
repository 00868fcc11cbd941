#!/usr/bin/env bash
# Re-exports the TVM libraries the device-code tests use with apache-tvm
# from PyPI, on a machine with no GPU:
#   tests/tools/export-tvm-libraries.sh [VERSION [OUT]]
# VERSION defaults to 0.27.0, exported into tests/data/tvm; another release
# goes into tests/data/tvm/MAJOR.MINOR (0.25.0: tests/data/tvm/0.25).
# It makes a venv in target/tvm-export-VERSION with apache-tvm and the CUDA tools
# (installed with --no-deps, about 0.5 GB under site-packages/nvidia/cu13),
# and a driver stub (every call fails) so that TVM's CUDA runtime loads:
# without it TVM exports CUDA source instead of compiled code. The source
# library is exported in a second run without the stub, as TVM does on a
# machine with no CUDA at all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
version="${1:-0.27.0}"
default_out="$root/tests/data/tvm"
[ "$version" = 0.27.0 ] || default_out="$root/tests/data/tvm/${version%.*}"
out="$(realpath -m "${2:-$default_out}")"
work="$root/target/tvm-export-$version"
venv="$work/venv"
mkdir -p "$out" "$work/stub"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  # TVM 0.25's runtime links a tvm-ffi C++ symbol that 0.1.13 changed.
  ffi=()
  [ "$version" != 0.25.0 ] || ffi=(apache-tvm-ffi==0.1.12)
  "$venv/bin/pip" install -q "apache-tvm==$version" "${ffi[@]}" numpy
  "$venv/bin/pip" install -q --no-deps nvidia-cuda-nvcc nvidia-cuda-nvrtc nvidia-cuda-runtime \
    nvidia-cuda-crt nvidia-nvvm nvidia-cuda-cccl cuda-bindings cuda-pathfinder
fi
cu="$(echo "$venv"/lib/python3*/site-packages/nvidia/cu13)"
# TVM 0.25's NVRTC looks for CCCL's headers only under targets/<arch>/include.
if [ "$version" = 0.25.0 ]; then
  mkdir -p "$cu/targets/x86_64-linux" && ln -sfn "$cu/include" "$cu/targets/x86_64-linux/include"
fi
cat >"$work/stub/stub.c" <<'C'
/* A CUDA driver with no device: every call fails, names are answered. */
#define F(n) int n(void) { return 100; }
F(cuDeviceGetName) F(cuFuncSetAttribute) F(cuLaunchKernelEx) F(cuModuleGetFunction)
F(cuModuleLoadData) F(cuModuleUnload) F(cuTensorMapEncodeTiled) F(cuInit) F(cuDriverGetVersion)
F(cuGetProcAddress) F(cuGetProcAddress_v2) F(cuDeviceGetCount)
int cuGetErrorName(int e, const char** s) { (void)e; *s = "CUDA_ERROR_NO_DEVICE"; return 0; }
int cuGetErrorString(int e, const char** s) { (void)e; *s = "no CUDA-capable device"; return 0; }
C
gcc -shared -fPIC -o "$work/stub/libcuda.so.1" "$work/stub/stub.c"
cd "$work"
# Preloaded as well: TVM 0.25's CUDA runtime names no libcuda.so.1 it needs.
LD_PRELOAD="$work/stub/libcuda.so.1" LD_LIBRARY_PATH="$work/stub:$cu/lib" PATH="$cu/bin:$PATH" CUDA_PATH="$cu" \
  TVM_CUDA_NVRTC_EXTRA_OPTS="-I$cu/include/cccl" \
  "$venv/bin/python" "$root/tests/tools/export-tvm-libraries.py" "$out"
PATH="$cu/bin:$PATH" "$venv/bin/python" "$root/tests/tools/export-tvm-libraries.py" "$out" source
