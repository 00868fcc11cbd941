#!/usr/bin/env python3
"""Compiles the Triton kernels of tests/data/triton with the Triton release
installed (no GPU needed) and copies each cache entry Triton writes (the
cubin, the metadata, the TTIR and source, the group file) into OUT/<kernel>/.

Usage: export-triton-kernels.py OUT. Run by tests/tools/export-triton-kernels.sh,
which installs the release into a venv at a fixed path, so that the paths
Triton records in its metadata and group files are the same on every run.
"""
import os
import shutil
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

OUT = sys.argv[1]


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def add_i64(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def row_sum(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def grid_2d(x_ptr, out_ptr, rows, cols, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    m = (r < rows) & (c < cols)
    tl.store(out_ptr + r * cols + c, tl.load(x_ptr + r * cols + c, mask=m) * 2.0, mask=m)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)[:, None]
    rn = tl.arange(0, BN)[None, :]
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn)
    tl.store(c_ptr + rm * BN + rn, tl.dot(a, b))


@triton.jit
def scalars(out_ptr, a_i64, b_fp16, c_bf16, d_fp64, e_i8, f_u32):
    tl.store(out_ptr, a_i64.to(tl.float32) + b_fp16.to(tl.float32) + c_bf16.to(tl.float32)
             + d_fp64.to(tl.float32) + e_i8.to(tl.float32) + f_u32.to(tl.float32))


@triton.jit
def many(p0, p1, p2, p3, p4, p5, p6, p7, n0, n1, n2, n3, n4, n5, n6, n7):
    tl.store(p0, tl.load(p1) + tl.load(p2) + tl.load(p3) + tl.load(p4) + tl.load(p5) + tl.load(p6)
             + tl.load(p7) + (n0 + n1 + n2 + n3 + n4 + n5 + n6 + n7).to(tl.float32))


@triton.jit
def descriptor(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    tl.store(out_ptr + tl.arange(0, BLOCK), desc.load([tl.program_id(0) * BLOCK]))


# name, function, signature, constexprs, options
KERNELS = [
    ("add", add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 256}, {}),
    ("row_sum", row_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "cols": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, {}),
    ("grid_2d", grid_2d, {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32", "BM": "constexpr",
                          "BN": "constexpr"}, {"BM": 32, "BN": 32}, {}),
    ("warps8", add_i64, {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n": "i64", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, {"num_warps": 8}),
    ("ctas2", add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 256}, {"num_ctas": 2}),
    ("big_shared", matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "BM": "constexpr",
                            "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 256, "BK": 128},
     {"num_warps": 8}),
    ("scalars", scalars, {"out_ptr": "*fp32", "a_i64": "i64", "b_fp16": "fp16", "c_bf16": "bf16", "d_fp64": "fp64",
                          "e_i8": "i8", "f_u32": "u32"}, {}, {}),
    ("many", many, {**{f"p{i}": "*fp32" for i in range(8)}, **{f"n{i}": "i32" for i in range(8)}}, {}, {}),
    ("scratch", descriptor, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 64}, {}),
]

CACHE = os.environ["TRITON_CACHE_DIR"]


def entries():
    return set(os.listdir(CACHE)) if os.path.isdir(CACHE) else set()


for name, fn, signature, constexprs, options in KERNELS:
    before = entries()
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
    kname = compiled.metadata.name
    # The entry this compile wrote: the one holding the group file that is new.
    new = [d for d in entries() - before if os.path.exists(os.path.join(CACHE, d, f"__grp__{kname}.json"))]
    if len(new) != 1:
        sys.exit(f"{name}: expected one new cache entry, found {new}")
    cache = os.path.join(CACHE, new[0])
    dest = os.path.join(OUT, name)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    for f in [f"{kname}.cubin", f"{kname}.json", f"{kname}.ttir", f"{kname}.source", f"__grp__{kname}.json"]:
        if os.path.exists(os.path.join(cache, f)):
            shutil.copyfile(os.path.join(cache, f), os.path.join(dest, f))
    md = compiled.metadata
    print(name, kname, "warps", md.num_warps, "ctas", md.num_ctas, "shared", md.shared,
          "scratch", md.global_scratch_size, getattr(md, "profile_scratch_size", None))
