"""Every Triton fixture of every release (tests/data/triton/<release>) launched
through the official Python package on our library, its output compared with
NumPy's: no Triton in the process, device memory from the CUDA driver.

    python tests/gpu/triton_check.py            # on a GPU of compute capability 9.0
    python tests/gpu/triton_check.py --fake     # on the logging fake driver

Run by tests/gpu/run.sh with PYTHONPATH holding the official package on ours.
With --fake (libcuda.so.1 on LD_LIBRARY_PATH being tests/data/fake_cuda.c,
which runs no kernel) the same launches are made and their outputs read back,
but not compared: the plumbing only. Prints one line per kernel and
`triton-gpu: N checks`; exits nonzero on a wrong answer or a failed launch.
"""

import ctypes
import os
import sys

import numpy as np
import tvm_ffi

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "tests", "data", "triton")
FAKE = "--fake" in sys.argv
cuda = ctypes.CDLL("libcuda.so.1")


def ok(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA error {rc}")


class Device:
    """Device memory of the primary context of device 0."""

    def __init__(self):
        ok(cuda.cuInit(0), "cuInit")
        ctx = ctypes.c_void_p()
        ok(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0), "cuDevicePrimaryCtxRetain")
        ok(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        self.held = []

    def put(self, array):
        """A device copy of `array` (C order); its address."""
        array = np.ascontiguousarray(array)
        ptr = ctypes.c_uint64()
        ok(cuda.cuMemAlloc_v2(ctypes.byref(ptr), max(array.nbytes, 1)), "cuMemAlloc")
        ok(cuda.cuMemcpyHtoD_v2(ptr, array.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(array.nbytes)),
           "cuMemcpyHtoD")
        self.held.append(ptr.value)
        return ptr.value

    def get(self, ptr, like):
        """The device memory at `ptr` as an array like `like`."""
        out = np.empty_like(like)
        ok(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
        ok(cuda.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(ptr),
                                ctypes.c_size_t(out.nbytes)), "cuMemcpyDtoH")
        return out

    def free(self):
        for p in self.held:
            cuda.cuMemFree_v2(ctypes.c_uint64(p))
        self.held = []


def add(dev, f, dtype=np.float32, n=1000, block=256):
    x = np.arange(n, dtype=dtype)
    y = (np.arange(n) * 2).astype(dtype)
    out = np.zeros(n, dtype=dtype)
    px, py, po = dev.put(x), dev.put(y), dev.put(out)
    f((n + block - 1) // block, 1, 1, px, py, po, n)
    return dev.get(po, out), x + y


def row_sum(dev, f):
    x = np.random.default_rng(0).random((8, 1000), dtype=np.float32)
    out = np.zeros(8, dtype=np.float32)
    px, po = dev.put(x), dev.put(out)
    f(8, 1, 1, px, po, 1000)
    return dev.get(po, out), x.sum(axis=1)


def grid_2d(dev, f):
    x = np.random.default_rng(1).random((50, 90), dtype=np.float32)
    out = np.zeros_like(x)
    px, po = dev.put(x), dev.put(out)
    f(2, 3, 1, px, po, 50, 90)
    return dev.get(po, out), x * 2


def big_shared(dev, f):
    rng = np.random.default_rng(2)
    a = (rng.random((128, 128)) - 0.5).astype(np.float16)
    b = (rng.random((128, 256)) - 0.5).astype(np.float16)
    c = np.zeros((128, 256), dtype=np.float32)
    pa, pb, pc = dev.put(a), dev.put(b), dev.put(c)
    f(1, 1, 1, pa, pb, pc)
    return dev.get(pc, c), a.astype(np.float32) @ b.astype(np.float32)


def scalars(dev, f):
    out = np.zeros(1, dtype=np.float32)
    po = dev.put(out)
    f(1, 1, 1, po, -2, 0.1, 1.5, 2.25, 7, 5)
    want = np.float32(-2 + float(np.float16(0.1)) + 1.5 + 2.25 + 7 + 5)
    return dev.get(po, out), np.array([want], dtype=np.float32)


def many(dev, f):
    buf = np.arange(8, dtype=np.float32)
    p = dev.put(buf)
    f(1, 1, 1, *[p + 4 * i for i in range(8)], *range(8))
    want = buf.copy()
    want[0] = buf[1:].sum() + sum(range(8))
    return dev.get(p, buf), want


def descriptor(dev, f):
    x = np.arange(64, dtype=np.float32) * 0.5
    out = np.zeros(64, dtype=np.float32)
    px, po = dev.put(x), dev.put(out)
    f(1, 1, 1, px, po, 64)
    return dev.get(po, out), x


# Per fixture: the kernel's symbol and how it is run and checked.
CASES = {
    "add": ("add", add),
    "ctas2": ("add", add),
    "ctas16": ("add", add),
    "attrs": ("add", add),
    "warps8": ("add_i64", lambda dev, f: add(dev, f, np.float16, n=3000, block=1024)),
    "row_sum": ("row_sum", row_sum),
    "grid_2d": ("grid_2d", grid_2d),
    "big_shared": ("matmul", big_shared),
    "scalars": ("scalars", scalars),
    "many": ("many", many),
    "scratch": ("descriptor", descriptor),
}


def main():
    to_artifacts = tvm_ffi.get_global_func("ffi.TritonCacheToArtifacts")
    load = tvm_ffi.get_global_func("ffi.Artifact.loader.triton")
    dev = Device()
    checks = wrong = 0
    for release in sorted(os.listdir(DATA)):
        for name in sorted(os.listdir(os.path.join(DATA, release))):
            symbol, run = CASES[name]
            checks += 1
            try:
                m = load(to_artifacts(f"triton_{name}", os.path.join(DATA, release, name)))
                got, want = run(dev, m[symbol])
                close = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-2, atol=2e-2)
                line = "launched (fake driver: not compared)" if FAKE else ("numpy" if close else "WRONG")
                if not FAKE and not close:
                    wrong += 1
                    line += f": max difference {np.abs(got.astype(np.float64) - want).max()}"
            except Exception as e:  # reported, not fatal
                wrong += 1
                line = f"FAILED: {type(e).__name__}: {e}"
            finally:
                dev.free()
            print(f"triton {release}/{name}: {line}")
    print(f"triton-gpu: {checks - wrong} checks, {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
