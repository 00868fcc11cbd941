"""Inputs much larger or deeper than usual, through the official Python
package on the official library and on ours: time and peak memory added,
each case in a fresh process (a crash is reported as such).

- ReprPrint of a 300,000-deep chain of Arrays;
- FromJSONGraphString of a 10^6-deep chain (36 MB of JSON, as ToJSONGraph
  lists nodes: each after the ones it refers to; the memory column is what
  reading added beyond the peak of building the text in Python, so
  tests/large_inputs.rs gives the figure to quote);
- json.Stringify of 100 strings of 2 MiB;
- json.Stringify of a 30,000-deep chain of Arrays with indent 2 (1.8 GB
  out, quadratic in the depth; the time includes Python decoding it).

usage: python benches/large_inputs.py [OURS_PACKAGE_DIR]
  OURS_PACKAGE_DIR: the package with our libtvm_ffi.so swapped in (default
  target/suite/pkg-ours, made by tests/official/python/run.sh).
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASE = r"""
import resource, sys, time
sys.setrecursionlimit(10000)
import tvm_ffi

def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

case = sys.argv[1]
if case == "repr":
    v = tvm_ffi.Array([])
    for _ in range(300_000):
        v = tvm_ffi.Array([v])
    f = tvm_ffi.get_global_func("ffi.ReprPrint")
    arg = v
elif case == "json_graph":
    n = 1_000_000
    nodes = ['{"type":"ffi.Array","data":[]}']
    nodes += ['{"type":"ffi.Array","data":[%d]}' % (i - 1) for i in range(1, n)]
    arg = '{"root_index":%d,"nodes":[%s]}' % (n - 1, ",".join(nodes))
    del nodes
    f = tvm_ffi.get_global_func("ffi.FromJSONGraphString")
elif case == "stringify":
    arg = tvm_ffi.Array([chr(97 + i % 26) * (2 << 20) for i in range(100)])
    f = tvm_ffi.get_global_func("ffi.json.Stringify")
elif case == "stringify_indent":
    v = tvm_ffi.Array([])
    for _ in range(30_000):
        v = tvm_ffi.Array([v])
    arg = v
    f = tvm_ffi.get_global_func("ffi.json.Stringify")
args = {"stringify": (arg, None), "stringify_indent": (arg, 2)}.get(case, (arg,))
before = peak_kib()
start = time.perf_counter()
out = f(*args)
seconds = time.perf_counter() - start
print(f"{seconds:.3f} {peak_kib() - before}", flush=True)
# Exit without releasing the deep result (its release recurses).
import os
os._exit(0)
"""


def run(case, pythonpath):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    child = subprocess.run([sys.executable, "-c", CASE, case], capture_output=True, text=True, env=env)
    if child.returncode != 0:
        return None, f"exit {child.returncode}"
    seconds, kib = child.stdout.split()
    return float(seconds), int(kib)


def main():
    ours = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/suite/pkg-ours")
    print(f"{'case':<16} {'official s':>11} {'ours s':>8} {'ratio':>6} {'official MiB':>13} {'ours MiB':>9}")
    for case in ["repr", "json_graph", "stringify", "stringify_indent"]:
        o_s, o_kib = run(case, "")
        u_s, u_kib = run(case, ours)
        fmt = lambda s: "crash" if s is None else f"{s:.3f}"
        mib = lambda k, s: k if s is None else f"{k / 1024:.0f}"
        ratio = f"{u_s / o_s:.2f}" if o_s and u_s else "-"
        print(f"{case:<16} {fmt(o_s):>11} {fmt(u_s):>8} {ratio:>6} {mib(o_kib, o_s):>13} {mib(u_kib, u_s):>9}")


if __name__ == "__main__":
    main()
