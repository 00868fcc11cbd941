"""The official Python package on both libraries, in one run: the time of
`import tvm_ffi` and of calls through the package (`testing.nop()` and
`testing.nop(1, "s", tensor)`), reported as ours / official.

usage: python benches/python_calls.py [--ir] [OURS_PACKAGE_DIR]
  OURS_PACKAGE_DIR: a copy of the package with our libtvm_ffi.so swapped in
  (default target/suite/pkg-ours, made by tests/official/python/run.sh). The official
  library is the one installed in the running interpreter's environment.
Each measurement runs in fresh processes, alternating the two libraries so
that machine noise hits both alike; figures are medians.
With --ir, instructions per call instead, counted by callgrind inside the
C API entry points (`TVMFFI*` and everything they call, such as the
callee's safe_call): the count at 2N calls minus the count at N, over N,
so start-up cancels out. The interpreter and the package's Cython code
are the same on both libraries and are left out: counted with them, Python's
own run-to-run variation (a few hundred instructions per call) hides the
difference.
"""

import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import json, sys, time, timeit
t0 = time.perf_counter()
import tvm_ffi
import_s = time.perf_counter() - t0
import numpy as np
maps = {l.split()[-1] for l in open("/proc/self/maps") if l.rstrip().endswith("/libtvm_ffi.so")}
f = tvm_ffi.get_global_func("testing.nop")
tensor = tvm_ffi.from_dlpack(np.zeros(4, dtype="float32"))
n = 200000
t_empty = min(timeit.repeat(lambda: f(), number=n, repeat=5)) / n
t_mixed = min(timeit.repeat(lambda: f(1, "s", tensor), number=n, repeat=5)) / n
print(json.dumps({"import": import_s, "nop": t_empty, "mixed": t_mixed, "lib": sorted(maps)}))
"""


IR_PROBE = r"""
import sys, tvm_ffi
import numpy as np
f = tvm_ffi.get_global_func("testing.nop")
tensor = tvm_ffi.from_dlpack(np.zeros(4, dtype="float32"))
n = int(sys.argv[2])
if sys.argv[1] == "nop":
    for _ in range(n):
        f()
else:
    for _ in range(n):
        f(1, "s", tensor)
"""


def env_for(env_path):
    env = dict(os.environ, PYTHONHASHSEED="0")
    if env_path:
        env["PYTHONPATH"] = env_path
    else:
        env.pop("PYTHONPATH", None)
    return env


def instructions(env_path, mode, n):
    out = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=TVMFFI*",
                          "--callgrind-out-file=/dev/null",
                          sys.executable, "-c", IR_PROBE, mode, str(n)],
                         env=env_for(env_path), check=True, capture_output=True, text=True)
    return int(next(l for l in out.stderr.splitlines() if "Collected" in l).split()[-1])


def main_ir(ours_pkg):
    n = 2000
    print(f"{'measure (library Ir per call)':<34}{'official':>12}{'ours':>12}{'ours/official':>15}")
    for mode, label in [("nop", "f() (testing.nop)"), ("mixed", 'f(1, "s", tensor)')]:
        per = {}
        for name, path in [("official", None), ("ours", ours_pkg)]:
            per[name] = (instructions(path, mode, 2 * n) - instructions(path, mode, n)) / n
        print(f"{label:<34}{per['official']:>12.0f}{per['ours']:>12.0f}"
              f"{per['ours'] / per['official']:>15.2f}")


def run(env_path):
    out = subprocess.run([sys.executable, "-c", PROBE], env=env_for(env_path), check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    args = sys.argv[1:]
    ir = "--ir" in args
    args = [a for a in args if a != "--ir"]
    ours_pkg = args[0] if args else os.path.join(ROOT, "target/suite/pkg-ours")
    if ir:
        main_ir(ours_pkg)
        return
    rounds = int(os.environ.get("ROUNDS", "7"))
    samples = {"official": [], "ours": []}
    for _ in range(rounds):
        samples["official"].append(run(None))
        samples["ours"].append(run(ours_pkg))
    libs = {k: v[0]["lib"] for k, v in samples.items()}
    assert libs["official"] != libs["ours"], f"both runs mapped {libs}"
    print(f"official: {libs['official'][0]}\nours:     {libs['ours'][0]}")
    print(f"{'measure':<34}{'official':>12}{'ours':>12}{'ours/official':>15}")
    for key, label, unit, scale in [
        ("import", "import tvm_ffi", "ms", 1e3),
        ("nop", "f() (testing.nop)", "ns", 1e9),
        ("mixed", 'f(1, "s", tensor)', "ns", 1e9),
    ]:
        off = statistics.median(s[key] for s in samples["official"])
        our = statistics.median(s[key] for s in samples["ours"])
        print(f"{label:<34}{off * scale:>10.1f}{unit}{our * scale:>10.1f}{unit}{our / off:>15.2f}")


if __name__ == "__main__":
    main()
