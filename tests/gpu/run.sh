#!/usr/bin/env bash
# Device code on a real GPU (docs/device.md). Runs on a CUDA machine, and
# says why it skipped anywhere else (tests/run-all.sh calls it):
#   tests/gpu/run.sh [LIBRARY]
# LIBRARY is our libtvm_ffi.so (default: target/testing, else target/release).
#   1. gpu_check (tests/gpu/gpu_check.c): every CUDA library TVM 0.27 exported
#      (tests/data/tvm) gives the CPU's answer on device memory, on the
#      default stream, a side stream, 8 threads with their own streams and
#      under CUDA-graph capture; then the launch overhead of a 3-argument
#      kernel, ours and (TVM_RUNTIME_CUDA=.../libtvm_runtime_cuda.so) TVM's.
#   2. the CPU libraries and the kernels through the official Python package
#      on ours (tests/python/tvm_libraries.py), when target/venv exists;
#   3. the official Python suite's GPU tests with PyTorch CUDA on both
#      libraries, when PyTorch with CUDA is importable there;
#   4. the official cubin_launcher example (examples/cubin_launcher of the
#      official sources) on both libraries, when nvcc and PyTorch are there;
#   5. every Triton fixture of every release (tests/data/triton) launched
#      through the official Python package on ours and compared with NumPy
#      (tests/gpu/triton_check.py; its kernels are for compute capability 9.0).
# What is missing (PyTorch, nvcc, the venv) is printed as skipped, never
# fatal: a GPU machine may have no network to install it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
lib="${1:-}"
if [ -z "$lib" ]; then
  for p in target/testing/libtvm_ffi.so target/release/libtvm_ffi.so; do
    [ -f "$p" ] && lib="$p" && break
  done
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu: skipped: no NVIDIA GPU here (nvidia-smi -L fails or is missing)"
  exit 0
fi
if [ -z "$lib" ] || [ ! -f "$lib" ]; then
  echo "gpu: no library: build it first (cargo build --profile testing)" >&2
  exit 1
fi
lib="$(realpath "$lib")"
work="$root/target/gpu"
mkdir -p "$work"
nvidia-smi -L
echo "== 1. gpu_check on $lib"
cc -O2 -o "$work/gpu_check" tests/gpu/gpu_check.c -Iinclude -L"$(dirname "$lib")" \
  -Wl,-rpath,"$(dirname "$lib")" -ltvm_ffi -ldl -lpthread
"$work/gpu_check" tests/data/tvm | tee "$work/gpu_check.log"

venv="$root/target/venv"
if [ -x "$venv/bin/python" ] && [ -d target/suite/pkg-ours ]; then
  cp "$lib" target/suite/pkg-ours/tvm_ffi/lib/libtvm_ffi.so
  echo "== 2. TVM's libraries through the official Python package, on ours"
  TVM_LIBRARIES_TMP="$work" PYTHONPATH="$root/target/suite/pkg-ours" \
    "$venv/bin/python" tests/python/tvm_libraries.py ours
  if "$venv/bin/python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "== 3. the official suite's GPU tests (PyTorch CUDA), official then ours"
    suite="$(ls -d target/suite/src/*/tests/python 2>/dev/null | head -1)"
    if [ -n "$suite" ]; then
      for side in official ours; do
        path=""
        [ "$side" = ours ] && path="$root/target/suite/pkg-ours"
        PYTHONPATH="$path" "$venv/bin/python" -m pytest -q -k "cuda or gpu or stream" "$suite" \
          2>&1 | tail -3 | sed "s/^/$side: /"
      done
    else
      echo "3. skipped: the official sources are not unpacked (tests/official/python/run.sh does it)"
    fi
  else
    echo "3. skipped: PyTorch with CUDA is not importable in $venv"
  fi
else
  echo "2, 3. skipped: no target/venv with the official package (tests/run-all.sh makes it)"
fi

example="$(ls -d target/suite/apache_tvm_ffi-*/examples/cubin_launcher 2>/dev/null | head -1)"
if ! command -v nvcc >/dev/null 2>&1; then
  echo "4. skipped: nvcc is not on PATH"
elif [ -z "$example" ] || [ ! -x "$venv/bin/python" ]; then
  echo "4. skipped: no official sources in target/suite (tests/official/python/run.sh unpacks them)"
elif ! "$venv/bin/python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "4. skipped: the cubin_launcher examples need PyTorch with CUDA in $venv"
else
  echo "== 4. the official cubin_launcher example (nvcc, NVRTC), official then ours"
  for side in official ours; do
    path=""
    [ "$side" = ours ] && path="$root/target/suite/pkg-ours"
    ( cd "$example" && PYTHONPATH="$path" "$venv/bin/python" example_nvrtc_cubin.py ) 2>&1 \
      | tail -3 | sed "s/^/$side: /"
  done
fi
if [ -x "$venv/bin/python" ] && [ -d target/suite/pkg-ours ]; then
  echo "== 5. Triton's kernels of every release through the official Python package, on ours"
  PYTHONPATH="$root/target/suite/pkg-ours" "$venv/bin/python" tests/gpu/triton_check.py
else
  echo "5. skipped: no target/venv with the official package (tests/run-all.sh makes it)"
fi
echo "gpu: done"
