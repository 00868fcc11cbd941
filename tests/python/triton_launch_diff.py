"""Every Triton fixture launched by Triton's own launcher and by ours, on a
logging fake driver: the same driver calls.

    python tests/python/triton_launch_diff.py TRITON_PYTHON OURS_PKG FAKE_DIR OUT_DIR

TRITON_PYTHON is a Python with the Triton release of the fixtures
(tests/data/triton/3.9; tests/tools/export-triton-kernels.sh makes its venv
under /tmp/tvm-ffi-rs-triton); OURS_PKG a directory holding the official
`tvm_ffi` package on our library; FAKE_DIR a directory holding the fake
driver `libcuda.so.1` (tests/data/fake_cuda.c). The same launches run
twice, each in a fresh process: through Triton (each kernel compiled from
tests/tools/triton_kernels.py at the fixed path the fixtures were made from,
then launched by its `CompiledKernel[grid](...)`: Triton's launcher, a
global scratch allocator set with `triton.set_allocator`), and through ours
(the fixture's cache entry as artifacts, `ffi.Artifact.loader.triton`, the
kernel called as `kernel(grid_x, grid_y, grid_z, *args)`: no Triton in the
process). The driver logs each image's digest and each launch's grid,
block, shared memory, attributes, stream and parameter bytes (pointers as
allocations); the sequences must be the same. On a difference both are
printed. Prints `triton-launch-diff: N checks`.
"""

import ctypes
import difflib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
RELEASE = "3.9"
DATA = os.path.join(ROOT, "tests", "data", "triton", RELEASE)
DEFINING = ("==", "cuModuleLoadData", "  image", "cuModuleGetFunction", "cuFuncSetAttribute",
            "cuLaunchKernelEx", "  params")

# Per fixture: the grid, then the arguments: ("buf", i, offset) a device
# buffer's address, anything else as given. The parameter sizes are the
# fake driver's FAKE_CUDA_PARAMS (the signature, then the hidden pointers).
LAUNCHES = [
    ("add", (4, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 1024]),
    ("ctas2", (3, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 1000]),
    ("warps8", (2, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 1 << 40]),
    ("row_sum", (8, 1, 1), [("buf", 0, 0), ("buf", 1, 0), 1000]),
    ("grid_2d", (2, 3, 1), [("buf", 0, 0), ("buf", 1, 0), 50, 90]),
    ("big_shared", (1, 1, 1), [("buf", 0, 0), ("buf", 0, 65536), ("buf", 0, 131072)]),
    ("scalars", (1, 1, 1), [("buf", 0, 0), -2, 0.1, 1.5, 2.25, -7, 4294967295]),
    ("many", (1, 1, 1), [("buf", 0, 4 * i) for i in range(8)] + list(range(8))),
    ("scratch", (16, 1, 1), [("buf", 0, 0), ("buf", 1, 0), 1024]),
]
PARAMS = ("add:8,8,8,4,8,8;add_i64:8,8,8,8,8,8;row_sum:8,8,4,8,8;grid_2d:8,8,4,4,8,8;"
          "matmul:8,8,8,8,8;scalars:8,8,2,2,8,1,4,8,8;many:" + ",".join(["8"] * 8 + ["4"] * 8 + ["8", "8"])
          + ";descriptor:8,8,4,8,8")


class Buffer:
    """1 MiB of the fake driver's device memory (Triton reads data_ptr and dtype)."""

    def __init__(self, driver, dtype):
        p = ctypes.c_uint64()
        assert driver.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
        self.ptr, self.dtype = p.value, dtype

    def data_ptr(self):
        return self.ptr


def scenario(side):
    driver = ctypes.CDLL("libcuda.so.1")
    driver.fake_cuda_log.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    if side == "triton":
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        import triton.language as tl

        sys.path.insert(0, os.environ["TRITON_KERNELS_DIR"])
        from triton_kernels import KERNELS

        compiled = {}
        for name, fn, signature, constexprs, options in KERNELS:
            src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
            compiled[name] = (triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options),
                              signature, constexprs)

        def allocate(size, align, stream):
            return Buffer(driver, None)

        triton.set_allocator(allocate)
        dtypes = {"*fp16": tl.float16, "*fp32": tl.float32}
    else:
        import tvm_ffi

        to_artifacts = tvm_ffi.get_global_func("ffi.TritonCacheToArtifacts")
        load = tvm_ffi.get_global_func("ffi.Artifact.loader.triton")
    bufs = [Buffer(driver, None) for _ in range(3)]
    results = []
    for name, grid, spec in LAUNCHES:
        driver.fake_cuda_log(b"%s", ("== " + name).encode())
        args = [bufs[a[1]].ptr + a[2] if isinstance(a, tuple) else a for a in spec]
        try:
            if side == "triton":
                k, signature, constexprs = compiled[name]
                # Every parameter in order, constexprs included; pointers as
                # objects with data_ptr() and the dtype Triton reads.
                given = iter(args)
                objs = []
                for pname, t in signature.items():
                    if t == "constexpr":
                        objs.append(constexprs[pname])
                    elif t.startswith("*"):
                        b = Buffer.__new__(Buffer)
                        b.ptr, b.dtype = next(given), dtypes.get(t, tl.float32)
                        objs.append(b)
                    else:
                        objs.append(next(given))
                k[grid](*objs)
            else:
                m = load(to_artifacts(f"triton_{name}", os.path.join(DATA, name)))
                m[_symbol(name)](*grid, *args)
            results.append(f"{name}: launched")
        except Exception as e:  # the transcript records it
            results.append(f"{name}: {type(e).__name__}: {e}")
    return results


def _symbol(name):
    return {"ctas2": "add", "warps8": "add_i64", "big_shared": "matmul", "scratch": "descriptor"}.get(name, name)


def run(side, python, ours_pkg, fake_dir, out_dir, kernels_dir):
    log = os.path.join(out_dir, f"{side}.log")
    if os.path.exists(log):
        os.unlink(log)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(LD_LIBRARY_PATH=fake_dir, FAKE_CUDA_LOG=log, FAKE_CUDA_DIFF="1", FAKE_CUDA_PARAMS=PARAMS,
               TRITON_KERNELS_DIR=kernels_dir, TRITON_CACHE_DIR=os.path.join(out_dir, "cache"),
               TRITON_DEFAULT_FP_FUSION="1")
    if side == "ours":
        env["PYTHONPATH"] = ours_pkg
    r = subprocess.run([python, __file__, "--side", side], env=env, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        sys.exit(f"the {side} run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    with open(log) as f:
        return r.stdout.splitlines(), f.read().splitlines()


def main():
    if sys.argv[1:2] == ["--side"]:
        for line in scenario(sys.argv[2]):
            print(line)
        return 0
    python, ours_pkg, fake_dir, out_dir = sys.argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    shutil.rmtree(os.path.join(out_dir, "cache"), ignore_errors=True)
    # The kernels' source at the path the fixtures were compiled from.
    kernels_dir = f"/tmp/tvm-ffi-rs-triton/{RELEASE}.0"
    os.makedirs(kernels_dir, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "tests", "tools", "triton_kernels.py"),
                    os.path.join(kernels_dir, "triton_kernels.py"))
    runs = {side: run(side, python, ours_pkg, fake_dir, out_dir, kernels_dir) for side in ("triton", "ours")}
    checks, wrong = 0, 0
    for side, (results, _) in runs.items():
        for r in results:
            ok = r.endswith(": launched")
            print(f"{side}: {r}" + ("" if ok else "   <-- WRONG"))
            checks += 1
            wrong += not ok
    theirs = [l for l in runs["triton"][1] if l.startswith(DEFINING)]
    ours = [l for l in runs["ours"][1] if l.startswith(DEFINING)]
    checks += 1
    if theirs != ours:
        wrong += 1
        print("the launches differ (- Triton's launcher, + ours):")
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(theirs, ours, "triton", "ours", n=3,
                                                                      lineterm=""))
        print("Triton's launcher, in full:\n" + "\n".join(theirs))
        print("ours, in full:\n" + "\n".join(ours))
    else:
        print(f"the same {sum(l.startswith('cuLaunchKernelEx') for l in ours)} launches, "
              f"{sum(l.startswith('cuModuleLoadData') for l in ours)} images")
    if wrong:
        print(f"triton-launch-diff: {wrong} wrong")
        return 1
    print(f"triton-launch-diff: {checks} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
