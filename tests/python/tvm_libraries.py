"""TVM 0.27's and 0.25's libraries (tests/data/tvm, tests/data/tvm/0.25)
through the official Python package,
without `import tvm`: `ours` checks that every library loads on our library,
that the CPU ones give NumPy's answers and that the CUDA ones inspect and
write back; `official` checks that the official library still fails on them
as the issue found (a missing `cuda` loader; a crash on the parallel loop),
which is what "ours adds" in docs/device.md. Each case runs in a child
process, so a crash is reported, not fatal. Prints one line per case and
`tvm-libraries: N checks` at the end; exits nonzero on a wrong answer."""

import ctypes
import os
import subprocess
import sys

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "tvm")
CUDA = ["cuda_cubin", "cuda_fatbin", "cuda_ptx", "cuda_nvptx", "cuda_source", "cuda_dyn_shared"]
CPU = ["parallel_cpu", "workspace_cpu", "packed_call_cpu"]
# Each release's folder under DATA, as a prefix of the case names.
RELEASES = ["", "0.25/"]


def case(name):
    """Runs in the child: one library, one line."""
    import numpy as np
    import tvm_ffi

    path = os.path.join(DATA, name + ".so")
    a = np.arange(1024, dtype="float32") * 0.5
    b = np.zeros(1024, dtype="float32")
    if os.path.basename(name).startswith("cuda"):
        m = tvm_ffi.load_module(path)
        c = m.imports[0]
        out = os.path.join(os.environ["TVM_LIBRARIES_TMP"], name + ".so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        m.write_to_file(out, "so")
        back = tvm_ffi.load_module(out)
        return f"{c.kind} serializable={c.is_binary_serializable()} reloaded={back.imports[0].kind}"
    m = tvm_ffi.load_module(path)
    base = os.path.basename(name)
    if base == "parallel_cpu":
        m["add_one_parallel"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
        return f"numpy={np.array_equal(b, a + 1)}"
    if base == "workspace_cpu":
        m["reverse_cumsum_workspace"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
        return f"numpy={np.array_equal(b, a[::-1] * 2 + a)}"

    @tvm_ffi.register_global_func("testing.tvm_fixture_copy")
    def copy(src, dst, n):
        ctypes.memmove(dst.value, src.value, n * 4)

    m["call_global"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
    return f"numpy={np.array_equal(b, a)}"


def run(name):
    r = subprocess.run(
        [sys.executable, __file__, "--case", name],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode < 0:
        return f"crashed (signal {-r.returncode})"
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    if lines:
        return lines[0][len("RESULT ") :]
    err = (r.stderr.strip().splitlines() or ["?"])[-1]
    return f"error: {err}"


def main():
    if sys.argv[1:2] == ["--case"]:
        try:
            print("RESULT " + case(sys.argv[2]), flush=True)
        except Exception as e:  # the transcript records it
            print("RESULT error: " + f"{type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
        return 0
    which = sys.argv[1]
    expect = {}
    for release in RELEASES:
        for name in CUDA:
            if which == "ours":
                expect[release + name] = "cuda serializable=True reloaded=cuda"
            else:
                expect[release + name] = (
                    "error: RuntimeError: Library binary was created using {cuda} but a loader of "
                    "that name is not registered. Make sure to have runtime that registers "
                    "ffi.Module.load_from_bytes.cuda"
                )
        for name in CPU:
            # On the official library, context slots nobody fills: NULL jumps.
            expect[release + name] = "numpy=True" if which == "ours" else "crashed (signal 11)"
    wrong = 0
    for name, want in expect.items():
        got = run(name)
        ok = got == want
        wrong += not ok
        print(f"{name}: {got}" + ("" if ok else f"   <-- expected {want}"))
    if wrong:
        print(f"tvm-libraries: {wrong} wrong")
        return 1
    print(f"tvm-libraries: {len(expect)} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
