"""The Triton kernels of tests/data/triton: their code, and how each is
compiled (signature, constexprs, options). Shared by the exporter
(export-triton-kernels.py) and the launch comparison with Triton's own
launcher (tests/python/triton_launch_diff.py)."""
import triton
import triton.language as tl


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

# What follows adapts the list to the Triton release installed; it stays
# below the kernels so that their line numbers (recorded in the TTIR and the
# cubin's line table) are the same for every release.
RELEASE = tuple(int(x) for x in triton.__version__.split(".")[:2])
# Device-side tensor descriptors (the kernel with global scratch) came in 3.4.
if not hasattr(tl, "make_tensor_descriptor"):
    KERNELS = [k for k in KERNELS if k[0] != "scratch"]
_ADD = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
# A cluster of 16 (non-portable), and the launch attributes each release
# knows (cooperative from 3.3, programmatic dependent launch from 3.4).
KERNELS.append(("ctas16", add, _ADD, {"BLOCK": 256}, {"num_ctas": 16}))
if RELEASE >= (3, 3):
    KERNELS.append(("attrs", add, _ADD, {"BLOCK": 256},
                    {"num_ctas": 2, "launch_cooperative_grid": True, **({"launch_pdl": True} if RELEASE >= (3, 4) else {})}))


def compile_kernel(fn, signature, constexprs, options):
    """`triton.compile` of one kernel for sm_90, spelled as the release spells it."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if RELEASE >= (3, 3):
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    else:
        # 3.0-3.2: the signature names the runtime parameters only, the
        # constexprs are constants.
        src = ASTSource(fn=fn, signature={k: v for k, v in signature.items() if v != "constexpr"},
                        constants=constexprs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)


def launch_arguments(signature, constexprs, given):
    """The arguments of `CompiledKernel[grid](...)` in order: each runtime
    parameter from `given`, the constexprs too from 3.3 on."""
    given = iter(given)
    return [constexprs[p] if t == "constexpr" else next(given) for p, t in signature.items()
            if t != "constexpr" or RELEASE >= (3, 3)]
