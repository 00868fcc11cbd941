"""The official Python package on both libraries, in one run: the time of
`import tvm_ffi` and of calls through the package (`testing.nop()` and
`testing.nop(1, "s", tensor)`), reported as ours / official.

usage: python benches/python_calls.py [OURS_PACKAGE_DIR]
  OURS_PACKAGE_DIR: a copy of the package with our libtvm_ffi.so swapped in
  (default target/suite/pkg-ours, made by tests/suite/run.sh). The official
  library is the one installed in the running interpreter's environment.
Each measurement runs in fresh processes, alternating the two libraries so
that machine noise hits both alike; figures are medians.
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


def run(env_path):
    env = dict(os.environ)
    if env_path:
        env["PYTHONPATH"] = env_path
    else:
        env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ours_pkg = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/suite/pkg-ours")
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
