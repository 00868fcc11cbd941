"""Every launch held against TVM's own runtime, on a logging fake driver.

    python tests/python/tvm_runtime_diff.py TVM_PYTHON OURS_PKG FAKE_DIR OUT_DIR

TVM_PYTHON is a Python with apache-tvm 0.27, NumPy and, for CUDA source,
cuda-bindings and NVRTC (the test command's target/tvm-runtime venv);
OURS_PKG a directory holding the official `tvm_ffi` package on our library;
FAKE_DIR a directory holding the fake driver `libcuda.so.1`
(tests/data/fake_cuda.c) and the fake runtime `libcudart.so.13`
(tests/data/fake_cudart.c) TVM's CUDA runtime links. The same scenario runs
twice, each time in a fresh process: on TVM's runtime (`import tvm`, its
loader, its launches) and on ours (the official Python package on our
library, no `import tvm`). It calls every CUDA library of tests/data/tvm
(TVM's host functions on device tensors, then each kernel directly, on the
default stream and on a stream set with `use_raw_stream`) and kernels whose
launch tags ask for clusters, programmatic dependent launch, cooperative
launch, the required block dimension and dynamic shared memory. The driver
logs what defines each launch: the image loaded (format, size, digest), the
kernel looked up, the attributes set, grid, block, dynamic shared memory,
launch attributes, stream and every parameter's bytes (device pointers as
the allocation they point into). Both sequences must be the same, after the
normalisations of `INTENDED` (each a row of docs/differences.md); on a
difference both are printed. Our log must also show no call that
synchronises the device. Prints `tvm-runtime-diff: N checks`.
"""

import ctypes
import difflib
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "tvm")
CUDA_LIBRARIES = ["cuda_cubin", "cuda_fatbin", "cuda_ptx", "cuda_nvptx", "cuda_source", "cuda_dyn_shared"]
N = 1024
# The driver calls that define a launch (the rest is each runtime's own
# bookkeeping: contexts, allocations, unloads).
DEFINING = ("==", "cuModuleLoadData", "  image", "cuModuleGetFunction", "cuFuncSetAttribute",
            "cuLaunchKernelEx", "  params")


def without_section(name):
    """Drops the driver calls of the scenario's section `name`."""
    def rule(lines):
        out, skipping = [], False
        for line in lines:
            if line.startswith("== "):
                skipping = line == "== " + name
            if not skipping:
                out.append(line)
        return out
    return rule


def without_later_shared_limits(lines):
    """Drops a kernel's dynamic shared memory limit raised after its first
    launch in a section (attribute 8, MAX_DYNAMIC_SHARED_SIZE_BYTES)."""
    out, launched = [], set()
    for line in lines:
        words = line.split()
        if line.startswith("== "):
            launched = set()
        elif line.startswith("cuLaunchKernelEx"):
            launched.add(words[1])
        elif line.startswith("cuFuncSetAttribute") and words[2] == "8" and words[1] in launched:
            continue
        out.append(line)
    return out


# Where ours differs on purpose (rows of docs/differences.md), normalised
# before comparing:
# - TVM's `nvptx` target declares its kernels `.func`, which TVM's runtime
#   hands to the driver (a real one answers CUDA_ERROR_NOT_FOUND; the fake
#   launches) and ours refuses before any driver call;
# - TVM sets a kernel's dynamic shared memory limit at its first launch
#   only (a later, larger size fails on a GPU); ours raises it whenever a
#   launch needs more.
INTENDED = [without_section("cuda_nvptx"), without_later_shared_limits]


# ---- The scenario (runs in the child, on either side) ----

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


KEEP = []  # what the capsules point to, alive for the whole run


class CudaBuffer:
    """N float32 of the fake driver's device memory, handed over by DLPack."""

    def __init__(self, driver, values):
        ptr = ctypes.c_uint64()
        assert driver.cuMemAlloc_v2(ctypes.byref(ptr), N * 4) == 0
        self.ptr = ptr.value
        ctypes.memmove(self.ptr, (ctypes.c_float * N)(*values), N * 4)

    def values(self):
        return list((ctypes.c_float * N).from_address(self.ptr))

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, **kwargs):
        shape = (ctypes.c_int64 * 1)(N)
        m = DLManagedTensor()
        m.dl_tensor = DLTensor(self.ptr, DLDevice(2, 0), 1, DLDataType(2, 32, 1), shape, None, 0)
        KEEP.extend([shape, m])
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(m), b"dltensor", None)


def blob(name, num_ints, tags):
    """TVM's serialized CUDA module with one PTX kernel `name` taking two
    pointers and `num_ints` int32 (CUDAModuleNode::SaveToBytes)."""
    def text(b):
        return struct.pack("<Q", len(b)) + b
    args = [(3, 64, 1)] * 2 + [(0, 32, 1)] * num_ints
    params = ", ".join([".param .u64 p%d" % i for i in range(2)] + [".param .u32 n%d" % i for i in range(num_ints)])
    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry %s(%s)\n{\n\tret;\n}\n"
           % (name, params)).encode()
    out = text(b"ptx") + struct.pack("<Q", 1) + text(name.encode()) + text(name.encode())
    out += struct.pack("<Q", len(args)) + b"".join(struct.pack("<BBH", *a) for a in args)
    out += struct.pack("<Q", len(tags)) + b"".join(text(t.encode()) for t in tags)
    out += struct.pack("<Q", len(args)) + b"".join(struct.pack("<i", 0) for _ in args)
    return out + text(ptx)


# Kernels by their launch tags, each launched with the integers given
# (after its arguments): grid, block, then cluster or shared memory sizes.
TAGGED = [
    ("cluster", ["blockIdx.x", "threadIdx.x", "clusterCtaIdx.x"], [[16, 64, 2], [16, 64, 16], [16, 64, 2]]),
    ("preferred cluster", ["blockIdx.x", "threadIdx.x", "clusterCtaIdx.x", "preferredClusterCtaIdx.x"],
     [[16, 64, 2, 4]]),
    ("programmatic dependent launch", ["blockIdx.x", "threadIdx.x", "tirx.use_programtic_dependent_launch"],
     [[8, 128]]),
    ("cooperative", ["blockIdx.x", "threadIdx.x", "tirx.use_cooperative_launch"], [[8, 128]]),
    ("required block dimension", ["blockIdx.x", "threadIdx.x", "tirx.use_required_block_dimension"],
     [[8, 128]]),
    ("dynamic shared memory", ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"],
     [[8, 128, 1000], [8, 128, 60000], [8, 128, 50000], [8, 128, 70000]]),
    ("dynamic shared memory, large at first", ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"],
     [[8, 128, 60000], [8, 128, 1000]]),
]


def scenario(side):
    if side == "tvm":
        import tvm  # noqa: F401  TVM's runtime: its loader, its launches
    import tvm_ffi

    driver = ctypes.CDLL("libcuda.so.1")
    driver.fake_cuda_log.argtypes = [ctypes.c_char_p, ctypes.c_char_p]

    def mark(what):
        driver.fake_cuda_log(b"%s", ("== " + what).encode())

    results = []
    a = CudaBuffer(driver, [i * 0.5 for i in range(N)])
    b = CudaBuffer(driver, [0.0] * N)
    ta, tb = tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b)
    pa, pb = ctypes.c_void_p(a.ptr), ctypes.c_void_p(b.ptr)
    device = tvm_ffi.device("cuda", 0)

    def check(what, ok):
        results.append(f"{what}: {'ok' if ok else 'WRONG'}")

    for lib in CUDA_LIBRARIES:
        mark(lib)
        m = tvm_ffi.load_module(os.path.join(DATA, lib + ".so"))
        kernels = m.imports[0]
        if lib == "cuda_nvptx":
            try:
                m["add_one"](ta, tb)
                results.append(f"{lib} add_one: launched")
            except ValueError as e:
                results.append(f"{lib} add_one: refused: {e}")
            continue
        if lib == "cuda_dyn_shared":
            m["shared_reverse"](ta, tb, N)
            check(f"{lib} shared_reverse", b.values() == a.values()[::-1])
            for shared in [4096, 60000]:
                kernels["shared_reverse_kernel"](pa, pb, N, 1, 256, shared)
            continue
        m["add_one"](ta, tb)
        check(f"{lib} add_one", b.values() == [x + 1 for x in a.values()])
        m["scale_n"](ta, tb, N)
        check(f"{lib} scale_n", b.values() == [x * 3 for x in a.values()])
        kernels["add_one_kernel"](pa, pb, 8, 128)
        kernels["scale_n_kernel"](pa, pb, 100, 2, 64)
        with tvm_ffi.use_raw_stream(device, 0x5000):
            mark(lib + " on a stream")
            m["add_one"](ta, tb)
            kernels["scale_n_kernel"](pa, pb, 1000, 16, 64)
    load = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.cuda")
    for what, tags, launches in TAGGED:
        mark(what)
        k = load(blob("add_one_kernel", 0, tags))["add_one_kernel"]
        for ints in launches:
            k(pa, pb, *ints)
        check(what, b.values() == [x + 1 for x in a.values()])
    return results


# ---- The parent: both runs, the comparison ----

def run(side, tvm_python, ours_pkg, fake_dir, out_dir):
    log = os.path.join(out_dir, f"{side}.log")
    if os.path.exists(log):
        os.unlink(log)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(LD_LIBRARY_PATH=fake_dir, FAKE_CUDA_LOG=log, FAKE_CUDA_DIFF="1")
    if side == "ours":
        env["PYTHONPATH"] = ours_pkg
    r = subprocess.run([tvm_python, __file__, "--side", side], env=env, capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        sys.exit(f"the {side} run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    with open(log) as f:
        lines = f.read().splitlines()
    return r.stdout.splitlines(), lines


def defining(lines):
    out = [l for l in lines if l.startswith(DEFINING)]
    for rule in INTENDED:
        out = rule(out)
    return out


def main():
    if sys.argv[1:2] == ["--side"]:
        for line in scenario(sys.argv[2]):
            print(line)
        return 0
    tvm_python, ours_pkg, fake_dir, out_dir = sys.argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    checks, wrong = 0, 0
    runs = {side: run(side, tvm_python, ours_pkg, fake_dir, out_dir) for side in ("tvm", "ours")}
    nvptx = {"tvm": "cuda_nvptx add_one: launched",
             "ours": "cuda_nvptx add_one: refused: kernel add_one_kernel: the ptx code declares it a "
                     "device function (.func), not a kernel entry (.entry): no runtime can launch it"}
    for side, (results, _) in runs.items():
        for r in results:
            ok = r == nvptx[side] if r.startswith("cuda_nvptx") else r.endswith(": ok")
            print(f"{side}: {r}" + ("" if ok else "   <-- WRONG"))
            checks += 1
            wrong += not ok
    theirs, ours = defining(runs["tvm"][1]), defining(runs["ours"][1])
    checks += 1
    if theirs != ours:
        wrong += 1
        print("the launches differ (- TVM's runtime, + ours):")
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(theirs, ours, "tvm", "ours", n=3, lineterm=""))
        print("TVM's runtime, in full:")
        print("\n".join(theirs))
        print("ours, in full:")
        print("\n".join(ours))
    else:
        print(f"the same {sum(l.startswith('cuLaunchKernelEx') for l in ours)} launches, "
              f"{sum(l.startswith('cuModuleLoadData') for l in ours)} images")
    syncs = [l for l in runs["ours"][1] if "synchronises" in l or l.startswith("cuCtxSynchronize")]
    checks += 1
    if syncs:
        wrong += 1
        print("ours synchronised the device:", syncs)
    if wrong:
        print(f"tvm-runtime-diff: {wrong} wrong")
        return 1
    print(f"tvm-runtime-diff: {checks} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
