"""The host-side cost of one Triton kernel launch (everything before the driver call), on
the fake driver, whose launch does nothing (FAKE_CUDA_NOEMULATE):

    python benches/triton_launch.py OURS_PKG FAKE_DIR

Run with the Python of the `triton` stage's venv (/tmp/tvm-ffi-rs-triton/3.9.0/venv, which
tests/tools/export-triton-kernels.sh makes); OURS_PKG is a directory holding the official
`tvm_ffi` package on our library (target/suite/pkg-ours), FAKE_DIR one holding the fake
driver as libcuda.so.1. The `add` fixture (three pointers and an int) is launched on a grid
of 4 by Triton's JIT (`add[grid](x, y, out, n, BLOCK=256)`), by the compiled kernel's own
launcher (`CompiledKernel[grid](...)`), and by ours through the official package
(`kernel(4, 1, 1, x, y, out, n)`, int addresses), and by ours from C (`TVMFFIFunctionCall`
on target/release's library, 200,000 calls a run), each in its own process; µs per launch,
best of 5 runs.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
KERNELS_DIR = "/tmp/tvm-ffi-rs-triton/3.9.0"

CHILD = r"""
import ctypes, os, sys, timeit
driver = ctypes.CDLL("libcuda.so.1")
class Buffer:
    def __init__(self, dtype=None):
        p = ctypes.c_uint64(); assert driver.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
        self.ptr, self.dtype = p.value, dtype
    def data_ptr(self):
        return self.ptr
mode = sys.argv[1]
if mode == "ours":
    import tvm_ffi
    parts = tvm_ffi.get_global_func("ffi.TritonCacheToArtifacts")("b", sys.argv[2])
    k = tvm_ffi.get_global_func("ffi.Artifact.loader.triton")(parts)["add"]
    x, y, o = (Buffer().ptr for _ in range(3))
    fn = lambda: k(4, 1, 1, x, y, o, 1024)
else:
    import triton, triton.language as tl
    sys.path.insert(0, sys.argv[3])
    from triton_kernels import add
    x, y, o = (Buffer(tl.float32) for _ in range(3))
    if mode == "jit":
        fn = lambda: add[(4,)](x, y, o, 1024, BLOCK=256)
    else:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        src = ASTSource(fn=add, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                           "n": "i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 256})
        c = triton.compile(src, target=GPUTarget("cuda", 90, 32))
        run = c[(4, 1, 1)]
        fn = lambda: run(x, y, o, 1024, 256)
fn()
n = 20000
print(min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6)
"""


C_HOST = r"""
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>
static TVMFFIAny text(const char* s) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}
static TVMFFIAny call(const char* name, TVMFFIAny* args, int n) {
  TVMFFIByteArray b = {name, 0};
  while (name[b.size]) ++b.size;
  TVMFFIObjectHandle f = NULL;
  TVMFFIAny out = {0};
  if (TVMFFIFunctionGetGlobal(&b, &f) || !f || TVMFFIFunctionCall(f, args, n, &out)) { puts("fail"); _exit(1); }
  return out;
}
int main(int argc, char** argv) {
  (void)argc;
  TVMFFIAny args[2] = {text("b"), text(argv[1])};
  TVMFFIAny parts = call("ffi.TritonCacheToArtifacts", args, 2);
  TVMFFIAny mod = call("ffi.Artifact.loader.triton", &parts, 1);
  TVMFFIAny get[3] = {mod, text("add"), {0}};
  get[2].type_index = kTVMFFIBool;
  TVMFFIAny f = call("ffi.ModuleGetFunction", get, 3);
  int (*alloc)(uint64_t*, size_t) = (int (*)(uint64_t*, size_t))dlsym(dlopen("libcuda.so.1", RTLD_NOW), "cuMemAlloc_v2");
  uint64_t b[3];
  for (int i = 0; i < 3; ++i) alloc(&b[i], 4096);
  TVMFFIAny a[7] = {{0}};
  int64_t v[7] = {4, 1, 1, (int64_t)b[0], (int64_t)b[1], (int64_t)b[2], 1024};
  for (int i = 0; i < 7; ++i) { a[i].type_index = kTVMFFIInt; a[i].v_int64 = v[i]; }
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int it = 0; it < 200000; ++it) {
      TVMFFIAny out = {0};
      if (TVMFFIFunctionCall(f.v_obj, a, 7, &out)) { puts("fail"); return 1; }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 200000 / 1e3;
    if (us < best) best = us;
  }
  printf("%f\n", best);
  return 0;
}
"""


def measure_c(fake_dir):
    import tempfile
    lib = os.path.join(ROOT, "target", "release")
    work = tempfile.mkdtemp()
    src, exe = os.path.join(work, "host.c"), os.path.join(work, "host")
    with open(src, "w") as f:
        f.write(C_HOST)
    subprocess.run(["cc", "-O2", "-I", os.path.join(ROOT, "include"), src, "-L", lib, f"-Wl,-rpath,{lib}",
                    "-ltvm_ffi", "-ldl", "-o", exe], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=fake_dir, FAKE_CUDA_NOEMULATE="1")
    data = os.path.join(ROOT, "tests", "data", "triton", "3.9", "add")
    out = subprocess.run([exe, data], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def measure(mode, ours_pkg, fake_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update(LD_LIBRARY_PATH=fake_dir, FAKE_CUDA_NOEMULATE="1", TRITON_DEFAULT_FP_FUSION="1")
    if mode == "ours":
        env["PYTHONPATH"] = ours_pkg
    data = os.path.join(ROOT, "tests", "data", "triton", "3.9", "add")
    out = subprocess.run([sys.executable, "-c", CHILD, mode, data, KERNELS_DIR], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{mode} failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def main():
    ours_pkg, fake_dir = sys.argv[1], sys.argv[2]
    import shutil
    os.makedirs(KERNELS_DIR, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "tests", "tools", "triton_kernels.py"),
                    os.path.join(KERNELS_DIR, "triton_kernels.py"))
    jit = measure("jit", ours_pkg, fake_dir)
    compiled = measure("compiled", ours_pkg, fake_dir)
    ours = measure("ours", ours_pkg, fake_dir)
    from_c = measure_c(fake_dir)
    print(f"{'launch path':<48}{'us/launch':>10}{'ours / it':>11}")
    print(f"{'Triton JIT: add[grid](...)':<48}{jit:>10.2f}{ours / jit:>11.2f}")
    print(f"{'Triton CompiledKernel[grid](...)':<48}{compiled:>10.2f}{ours / compiled:>11.2f}")
    print(f"{'ours, Python through the official package':<48}{ours:>10.2f}{1:>11.2f}")
    print(f"{'ours, C (TVMFFIFunctionCall, target/release)':<48}{from_c:>10.2f}{from_c / ours:>11.2f}")


if __name__ == "__main__":
    main()
