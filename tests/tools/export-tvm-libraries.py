#!/usr/bin/env python3
"""Exports the TVM libraries of tests/data/tvm with apache-tvm 0.25 to 0.27 (no GPU needed).

Usage: export-tvm-libraries.py OUT [source]. Run by tests/tools/export-tvm-libraries.sh,
which installs TVM and the CUDA tools from PyPI and puts a driver stub on
LD_LIBRARY_PATH so that TVM's CUDA runtime loads; `source` exports the CUDA
library TVM writes when no CUDA runtime loads (CUDA source, fmt "cuda").
What each function computes is checked by tests/device_code.rs.
"""
import os
import sys

import tvm
import tvm.support.nvcc  # registers tvm_callback_cuda_compile
from tvm.script import ir as I
from tvm.script import tirx as T

OUT = sys.argv[1]
N = 1024


def export(mod, target, name):
    with tvm.target.Target(target):
        lib = tvm.compile(mod, target=target)
    path = os.path.join(OUT, name)
    lib.export_library(path)
    print("exported", path, os.path.getsize(path))
    return lib


# --- CPU: a parallel loop (ParallelLaunch), a workspace (AllocWorkspace), a packed call.
@T.prim_func
def add_one_parallel(a: T.Buffer((N,), "float32"), b: T.Buffer((N,), "float32")):
    T.func_attr({"global_symbol": "add_one_parallel"})
    for i in T.parallel(N):
        b[i] = a[i] + T.float32(1)


@T.prim_func
def reverse_cumsum_workspace(a: T.Buffer((N,), "float32"), b: T.Buffer((N,), "float32")):
    T.func_attr({"global_symbol": "reverse_cumsum_workspace"})
    tmp = T.alloc_buffer((N,), "float32")
    for i in range(N):
        tmp[i] = a[N - 1 - i] * T.float32(2)
    for i in range(N):
        b[i] = tmp[i] + a[i]


@T.prim_func
def call_global(a: T.Buffer((N,), "float32"), b: T.Buffer((N,), "float32")):
    T.func_attr({"global_symbol": "call_global"})
    T.evaluate(T.call_packed("testing.tvm_fixture_copy", a.data, b.data, N))


if sys.argv[2:] != ["source"]:
    export(tvm.IRModule({"add_one_parallel": add_one_parallel}), "llvm", "parallel_cpu.so")
    export(tvm.IRModule({"reverse_cumsum_workspace": reverse_cumsum_workspace}), "llvm", "workspace_cpu.so")
    export(tvm.IRModule({"call_global": call_global}), "llvm", "packed_call_cpu.so")


# --- CUDA: two kernels, int32 arguments, dynamic shared memory.
@I.ir_module
class CudaModule:
    @T.prim_func
    def add_one(a: T.Buffer((N,), "float32"), b: T.Buffer((N,), "float32")):
        T.func_attr({"global_symbol": "add_one"})
        for bx in T.thread_binding(N // 128, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                b[bx * 128 + tx] = a[bx * 128 + tx] + T.float32(1)

    @T.prim_func
    def scale_n(a: T.handle, b: T.handle, n: T.int32):
        T.func_attr({"global_symbol": "scale_n"})
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    B[bx * 64 + tx] = A[bx * 64 + tx] * T.float32(3)


@T.prim_func
def shared_reverse(a: T.handle, b: T.handle, n: T.int32):
    T.func_attr({"global_symbol": "shared_reverse"})
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            S = T.alloc_buffer((n,), "float32", scope="shared.dyn")
            for k in range((n + 255) // 256):
                if k * 256 + tx < n:
                    S[k * 256 + tx] = A[k * 256 + tx]
            T.tvm_storage_sync("shared")
            for k in range((n + 255) // 256):
                if k * 256 + tx < n:
                    B[k * 256 + tx] = S[n - 1 - (k * 256 + tx)]


arch = {"kind": "cuda", "arch": "sm_90"}
if sys.argv[2:] == ["source"]:
    # Without a loadable CUDA runtime TVM exports the CUDA source (fmt "cuda").
    export(CudaModule, arch, "cuda_source.so")
    sys.exit(0)
os.environ["TVM_CUDA_COMPILE_MODE"] = "nvrtc"
export(CudaModule, arch, "cuda_cubin.so")
export(tvm.IRModule({"shared_reverse": shared_reverse}), arch, "cuda_dyn_shared.so")
os.environ["TVM_CUDA_COMPILE_MODE"] = "nvcc"
export(CudaModule, arch, "cuda_fatbin.so")
os.environ["TVM_CUDA_COMPILE_MODE"] = "nvrtc"


@tvm.register_global_func("tvm_callback_cuda_compile", override=True)
def compile_to_ptx(code, target=None):
    return tvm.support.nvcc.compile_cuda(code, target_format="ptx", arch="sm_90")


export(CudaModule, arch, "cuda_ptx.so")
export(CudaModule, {"kind": "nvptx", "mcpu": "sm_90"}, "cuda_nvptx.so")
