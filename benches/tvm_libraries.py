"""Run-time services of TVM's generated code: ours against TVM's own runtime.

    python benches/tvm_libraries.py OURS_PKG TVM_PYTHON

OURS_PKG is a directory holding the official `tvm_ffi` package on our library
(target/suite/pkg-ours after tests/run-all.sh); TVM_PYTHON a Python with
apache-tvm 0.27 installed (the test command's stage tvm-runtime makes one in
target/tvm-runtime). Each library of tests/data/tvm is called the same
way on both sides, through the official Python package: on ours without
`import tvm` (our thread pool, workspaces and FFI slots), and on the official
library after `import tvm` (TVM's). Prints microseconds per call, best of 5
runs, and the ratio ours / TVM's. The kernel launch path (a 3-argument
kernel, up to the driver) is measured on ours with the fake driver of
tests/data/fake_cuda.c, whose launch does nothing with FAKE_CUDA_NOEMULATE:
TVM's own runtime cannot run without a real driver (tests/gpu/run.sh
compares both on a GPU)."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "tvm")

# The child's setup, shared with benches/tvm_pool.py: argv[1] says the side
# ("tvm" imports TVM), argv[2] the folder of the libraries; `cases` maps each
# CPU library to a call of its function on two tensors of 1,024 floats.
SETUP = r"""
import ctypes, os, sys, timeit
import numpy as np
if sys.argv[1] == "tvm":
    import tvm  # TVM's runtime registers its services
import tvm_ffi
data = sys.argv[2]
a = np.arange(1024, dtype="float32"); b = np.zeros(1024, dtype="float32")
ta, tb = tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b)
@tvm_ffi.register_global_func("testing.tvm_fixture_copy")
def copy(src, dst, n):
    ctypes.memmove(dst.value, src.value, n * 4)
cases = {}
for lib, fn in [("parallel_cpu", "add_one_parallel"), ("workspace_cpu", "reverse_cumsum_workspace"),
                ("packed_call_cpu", "call_global")]:
    f = tvm_ffi.load_module(os.path.join(data, lib + ".so"))[fn]
    cases[lib] = lambda f=f: f(ta, tb)
"""

CHILD = SETUP + r"""
if sys.argv[1] == "ours-kernel":
    k = tvm_ffi.load_module(os.path.join(data, "cuda_cubin.so")).imports[0]["scale_n_kernel"]
    pa, pb = a.ctypes.data, b.ctypes.data
    cases = {"kernel launch (fake driver)": lambda: k(pa, pb, 1024, 16, 64)}
for name, fn in cases.items():
    fn()
    n = 2000
    best = min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6
    print(f"{name}\t{best:.2f}")
"""


def measure(python, mode, env):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(CHILD)
    out = subprocess.run([python, f.name, mode, DATA], env=env, capture_output=True, text=True)
    os.unlink(f.name)
    if out.returncode != 0:
        sys.exit(f"{mode} failed:\n{out.stderr}")
    return dict(line.split("\t") for line in out.stdout.strip().splitlines())


def main():
    ours_pkg, tvm_python = sys.argv[1], sys.argv[2]
    env = dict(os.environ, PYTHONPATH=ours_pkg)
    ours = measure(tvm_python, "ours", env)
    theirs = measure(tvm_python, "tvm", {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    print(f"{'library':<28}{'TVM us/call':>14}{'ours us/call':>14}{'ratio':>8}")
    for name in ours:
        t, o = float(theirs[name]), float(ours[name])
        print(f"{name:<28}{t:>14.2f}{o:>14.2f}{o / t:>8.2f}")
    fake = tempfile.mkdtemp()
    src = os.path.join(HERE, "..", "tests", "data", "fake_cuda.c")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", os.path.join(fake, "libcuda.so.1"), src], check=True)
    env = dict(env, LD_LIBRARY_PATH=fake, FAKE_CUDA_NOEMULATE="1")
    for name, us in measure(tvm_python, "ours-kernel", env).items():
        print(f"{name:<28}{'-':>14}{float(us):>14.2f}")


if __name__ == "__main__":
    main()
