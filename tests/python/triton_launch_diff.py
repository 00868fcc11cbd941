"""Every Triton fixture of one release launched by that release's own
launcher and by ours, on a logging fake driver: the same driver calls.

    python tests/python/triton_launch_diff.py VERSION TRITON_PYTHON OURS_PKG FAKE_DIR OUT_DIR

VERSION is the Triton release of the fixtures (3.9.0: tests/data/triton/3.9);
TRITON_PYTHON a Python with it installed
(tests/tools/export-triton-kernels.sh makes its venv under
/tmp/tvm-ffi-rs-triton/VERSION); OURS_PKG a directory holding the official
`tvm_ffi` package on our library; FAKE_DIR a directory holding the fake
driver `libcuda.so.1` (tests/data/fake_cuda.c). The same launches run
twice, each in a fresh process: through Triton (each kernel compiled from
tests/tools/triton_kernels.py at the fixed path the fixtures were made from,
then launched by its `CompiledKernel[grid](...)`: Triton's launcher, a
global scratch allocator set with `triton.set_allocator`; before 3.8, whose
driver asks PyTorch for the device and stream, a stand-in driver answers
device 0 and the default stream, as PyTorch would), and through ours
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
DEFINING = ("==", "cuModuleLoadData", "  image", "cuModuleGetFunction", "cuFuncSetAttribute",
            "cuFuncSetCacheConfig", "cuLaunchKernel", "  params")

# Per fixture: the grid, then the arguments: ("buf", i, offset) a device
# buffer's address, anything else as given (the i8 is positive: launchers
# before 3.7 parse it with PyArg's "b", which refuses a negative one). The parameter sizes are the
# fake driver's FAKE_CUDA_PARAMS (the signature, then the hidden pointers).
LAUNCHES = [
    ("add", (4, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 1024]),
    ("ctas2", (3, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 1000]),
    ("warps8", (2, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 1 << 40]),
    ("row_sum", (8, 1, 1), [("buf", 0, 0), ("buf", 1, 0), 1000]),
    ("grid_2d", (2, 3, 1), [("buf", 0, 0), ("buf", 1, 0), 50, 90]),
    ("big_shared", (1, 1, 1), [("buf", 0, 0), ("buf", 0, 65536), ("buf", 0, 131072)]),
    ("scalars", (1, 1, 1), [("buf", 0, 0), -2, 0.1, 1.5, 2.25, 7, 4294967295]),
    ("many", (1, 1, 1), [("buf", 0, 4 * i) for i in range(8)] + list(range(8))),
    ("scratch", (16, 1, 1), [("buf", 0, 0), ("buf", 1, 0), 1024]),
    ("ctas16", (2, 2, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 4096]),
    ("attrs", (3, 1, 1), [("buf", 0, 0), ("buf", 1, 0), ("buf", 2, 0), 700]),
]
SIZES = {"add": [8, 8, 8, 4], "add_i64": [8, 8, 8, 8], "row_sum": [8, 8, 4], "grid_2d": [8, 8, 4, 4],
         "matmul": [8, 8, 8], "scalars": [8, 8, 2, 2, 8, 1, 4], "many": [8] * 8 + [4] * 8, "descriptor": [8, 8, 4]}


def params_spec(version):
    """FAKE_CUDA_PARAMS: each kernel's parameter sizes, then the hidden
    pointers the release appends (none before 3.3, the global scratch from
    3.3, the profile scratch too from 3.5)."""
    minor = int(version.split(".")[1])
    hidden = [8] * (0 if minor < 3 else 1 if minor < 5 else 2)
    return ";".join(f"{k}:" + ",".join(map(str, v + hidden)) for k, v in SIZES.items())


def stand_in_driver():
    """Before 3.8 Triton's CUDA driver asks PyTorch for the device, the
    stream and the capability: answer as PyTorch would on one sm_90 device
    (device 0, the default stream)."""
    import triton
    from triton.backends.nvidia import driver as nv

    class StandIn(nv.CudaDriver):
        def __init__(self):
            self.utils = nv.CudaUtils()
            self.launcher_cls = nv.CudaLauncher
            self.get_device_capability = lambda device=0: (9, 0)
            self.get_current_stream = lambda device=0: 0
            self.get_current_device = lambda: 0
            self.set_current_device = lambda device: None

    triton.runtime.driver.set_active(StandIn())


class Buffer:
    """1 MiB of the fake driver's device memory (Triton reads data_ptr and dtype)."""

    def __init__(self, driver, dtype):
        p = ctypes.c_uint64()
        assert driver.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
        self.ptr, self.dtype = p.value, dtype

    def data_ptr(self):
        return self.ptr


def scenario(side, data):
    driver = ctypes.CDLL("libcuda.so.1")
    driver.fake_cuda_log.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    if side == "triton":
        import triton
        import triton.language as tl

        sys.path.insert(0, os.environ["TRITON_KERNELS_DIR"])
        from triton_kernels import KERNELS, RELEASE, compile_kernel, launch_arguments

        if RELEASE < (3, 8):
            stand_in_driver()
        compiled = {name: (compile_kernel(fn, signature, constexprs, options), signature, constexprs)
                    for name, fn, signature, constexprs, options in KERNELS}

        def allocate(size, align, stream):
            return Buffer(driver, None)

        if hasattr(triton, "set_allocator"):
            triton.set_allocator(allocate)
        dtypes = {"*fp16": tl.float16, "*fp32": tl.float32}
    else:
        import tvm_ffi

        to_artifacts = tvm_ffi.get_global_func("ffi.TritonCacheToArtifacts")
        load = tvm_ffi.get_global_func("ffi.Artifact.loader.triton")
    bufs = [Buffer(driver, None) for _ in range(3)]
    results = []
    for name, grid, spec in [l for l in LAUNCHES if os.path.isdir(os.path.join(data, l[0]))]:
        driver.fake_cuda_log(b"%s", ("== " + name).encode())
        args = [bufs[a[1]].ptr + a[2] if isinstance(a, tuple) else a for a in spec]
        try:
            if side == "triton":
                k, signature, constexprs = compiled[name]
                # Pointers as objects with data_ptr() and the dtype Triton reads.
                types = iter(t for t in signature.values() if t != "constexpr")
                objs = []
                for a in args:
                    t = next(types)
                    if t.startswith("*"):
                        b = Buffer.__new__(Buffer)
                        b.ptr, b.dtype = a, dtypes.get(t, tl.float32)
                        a = b
                    objs.append(a)
                k[grid](*launch_arguments(signature, constexprs, objs))
            else:
                m = load(to_artifacts(f"triton_{name}", os.path.join(data, name)))
                m[_symbol(name)](*grid, *args)
            results.append(f"{name}: launched")
        except Exception as e:  # the transcript records it
            results.append(f"{name}: {type(e).__name__}: {e}")
    return results


def _symbol(name):
    return {"ctas2": "add", "ctas16": "add", "attrs": "add", "warps8": "add_i64", "big_shared": "matmul",
            "scratch": "descriptor"}.get(name, name)


def run(side, version, python, ours_pkg, fake_dir, out_dir, kernels_dir):
    log = os.path.join(out_dir, f"{side}.log")
    if os.path.exists(log):
        os.unlink(log)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(LD_LIBRARY_PATH=fake_dir, FAKE_CUDA_LOG=log, FAKE_CUDA_DIFF="1", FAKE_CUDA_PARAMS=params_spec(version),
               TRITON_LIBCUDA_PATH=fake_dir,
               TRITON_KERNELS_DIR=kernels_dir, TRITON_CACHE_DIR=os.path.join(out_dir, "cache"),
               TRITON_DEFAULT_FP_FUSION="1")
    if side == "ours":
        env["PYTHONPATH"] = ours_pkg
    r = subprocess.run([python, __file__, "--side", side, data_of(version)], env=env, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        sys.exit(f"the {side} run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    with open(log) as f:
        return r.stdout.splitlines(), f.read().splitlines()


def data_of(version):
    """The fixtures of a release: tests/data/triton/MAJOR.MINOR."""
    return os.path.join(ROOT, "tests", "data", "triton", ".".join(version.split(".")[:2]))


def main():
    if sys.argv[1:2] == ["--side"]:
        for line in scenario(sys.argv[2], sys.argv[3]):
            print(line)
        return 0
    version, python, ours_pkg, fake_dir, out_dir = sys.argv[1:6]
    os.makedirs(out_dir, exist_ok=True)
    shutil.rmtree(os.path.join(out_dir, "cache"), ignore_errors=True)
    # The kernels' source at the path the fixtures were compiled from.
    kernels_dir = f"/tmp/tvm-ffi-rs-triton/{version}"
    os.makedirs(kernels_dir, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "tests", "tools", "triton_kernels.py"),
                    os.path.join(kernels_dir, "triton_kernels.py"))
    # Its time as the exporter sets it (releases before 3.3 record it in the cubin).
    os.utime(os.path.join(kernels_dir, "triton_kernels.py"), (1767225600, 1767225600))
    runs = {side: run(side, version, python, ours_pkg, fake_dir, out_dir, kernels_dir) for side in ("triton", "ours")}
    checks, wrong = 0, 0
    for side, (results, _) in runs.items():
        for r in results:
            ok = r.endswith(": launched")
            print(f"{side}: {r}" + ("" if ok else "   <-- WRONG"))
            checks += 1
            wrong += not ok
    theirs = [l for l in runs["triton"][1] if l.startswith(DEFINING)]
    ours = [l for l in runs["ours"][1] if l.startswith(DEFINING)]
    if int(version.split(".")[1]) < 4:
        # The one difference, documented (docs/triton.md): launchers before
        # 3.4 pass an fp16/bf16 scalar as a pointer to its float32, of
        # which the kernel reads the low half (0.1 -> cdcc, 1.5 -> 0000);
        # ours passes the value (662e, c03f).
        checks += 1
        old, new = " feffffffffffffff cdcc 0000 ", " feffffffffffffff 662e c03f "
        at = [i for i, l in enumerate(theirs) if l.startswith("  params") and old in l]
        if len(at) != 1:
            wrong += 1
            print(f"Triton {version}: expected the fp16/bf16 scalars as float32 low halves once, found {len(at)}")
        else:
            theirs[at[0]] = theirs[at[0]].replace(old, new)
            print(f"Triton {version}: fp16/bf16 scalars passed as float32 low halves (cdcc 0000), ours the values")
    checks += 1
    if theirs != ours:
        wrong += 1
        print("the launches differ (- Triton's launcher, + ours):")
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(theirs, ours, "triton", "ours", n=3,
                                                                      lineterm=""))
        print("Triton's launcher, in full:\n" + "\n".join(theirs))
        print("ours, in full:\n" + "\n".join(ours))
    else:
        print(f"the same {sum(l.startswith('cuLaunchKernel') for l in ours)} launches, "
              f"{sum(l.startswith('cuModuleLoadData') for l in ours)} images")
    if wrong:
        print(f"triton-launch-diff: {wrong} wrong (Triton {version})")
        return 1
    print(f"triton-launch-diff: {checks} checks (Triton {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
