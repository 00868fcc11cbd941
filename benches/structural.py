"""The reflection-driven algorithms on both libraries, through the official
Python package, in one run:

1. time of StructuralEqual, StructuralHash, DeepCopy, ToJSONGraphString,
   FromJSONGraphString, StructuralWalk and StructuralMap on a tree of
   100,000 reflected nodes (medians, reported as ours / official);
2. the deepest nesting (an Array in an Array ...) each algorithm handles on
   the main thread's default 8 MiB stack: found by bisection, each probe in
   a fresh process, so a crash (the reference's stack overflow) is a
   failed probe; also a JSON document nested as deep for `ffi.json.Parse`.

usage: python benches/structural.py [OURS_PACKAGE_DIR]
  OURS_PACKAGE_DIR: the package with our libtvm_ffi.so swapped in (default
  target/suite/pkg-ours, made by tests/official/python/run.sh). ROUNDS (default 5)
  sets the timing rounds; DEPTH_LIMIT (default 1,500,000) caps the search,
  and DEPTH_LIMIT=0 skips it.
"""

import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TIMING = r"""
import json, time
import tvm_ffi
from tvm_ffi import Object
from tvm_ffi.dataclasses import py_class

@py_class("bench.Node", structural_eq="tree")
class Node(Object):
    op: str
    value: int
    args: tvm_ffi.Array

def tree(n):
    # A complete 4-ary tree of n nodes, built bottom-up.
    level = [Node("leaf", i, tvm_ffi.Array([])) for i in range(n * 3 // 4)]
    count = len(level)
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level), 4):
            nxt.append(Node("add", count, tvm_ffi.Array(level[i:i + 4])))
            count += 1
        level = nxt
    return level[0], count

root, count = tree(100_000)
other, _ = tree(100_000)
g = tvm_ffi.get_global_func
eq, h, copy = g("ffi.StructuralEqual"), g("ffi.StructuralHash"), g("ffi.DeepCopy")
to_s, from_s = g("ffi.ToJSONGraphString"), g("ffi.FromJSONGraphString")
text = to_s(root, None)
ops = {
    "StructuralEqual": lambda: eq(root, other, False, False),
    "StructuralHash": lambda: h(root, False, False),
    "DeepCopy": lambda: copy(root),
    "ToJSONGraphString": lambda: to_s(root, None),
    "FromJSONGraphString": lambda: from_s(text),
    "StructuralWalk": lambda: tvm_ffi.structural_walk(root, (int, lambda v: None)),
    "StructuralMap": lambda: tvm_ffi.structural_map(root, (str, lambda v: v)),
}
assert ops["StructuralEqual"]()
out = {"nodes": count}
for name, op in ops.items():
    op()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        op()
        times.append(time.perf_counter() - t0)
    out[name] = min(times)
maps = {l.split()[-1] for l in open("/proc/self/maps") if l.rstrip().endswith("/libtvm_ffi.so")}
out["lib"] = sorted(maps)
print(json.dumps(out))
"""

DEPTH = r"""
import os, sys
import tvm_ffi
op, depth = sys.argv[1], int(sys.argv[2])
g = tvm_ffi.get_global_func
if op == "json.Parse":
    g("ffi.json.Parse")("[" * depth + "]" * depth)
elif op == "FromJSONGraphString":
    nodes = ['{"type":"int","data":0}'] + [
        '{"type":"ffi.Array","data":[%d]}' % i for i in range(depth)]
    g("ffi.FromJSONGraphString")('{"root_index":%d,"nodes":[%s]}' % (depth, ",".join(nodes)))
else:
    make = g("ffi.Array")
    v = make(0)
    for _ in range(depth):
        v = make(v)
    {
        "StructuralEqual": lambda: g("ffi.StructuralEqual")(v, g("ffi.DeepCopy")(v), False, False),
        "StructuralHash": lambda: g("ffi.StructuralHash")(v, False, False),
        "DeepCopy": lambda: g("ffi.DeepCopy")(v),
        "ToJSONGraphString": lambda: g("ffi.ToJSONGraphString")(v, None),
        "StructuralWalk": lambda: tvm_ffi.structural_walk(v, (int, lambda x: None)),
        "RecursiveHash": lambda: g("ffi.RecursiveHash")(v),
        "ReprPrint": lambda: g("ffi.ReprPrint")(v),
    }[op]()
print("ok", flush=True)
# Skip tearing down the nesting: only the algorithm is measured.
os._exit(0)
"""

DEPTH_OPS = ["StructuralEqual", "StructuralHash", "DeepCopy", "ToJSONGraphString",
             "FromJSONGraphString", "StructuralWalk", "RecursiveHash", "ReprPrint", "json.Parse"]


def env_for(pkg):
    env = dict(os.environ)
    if pkg:
        env["PYTHONPATH"] = pkg
    else:
        env.pop("PYTHONPATH", None)
    return env


def probe(pkg, op, depth):
    """Whether `op` handles `depth` levels: "ok", or what stopped it."""
    r = subprocess.run([sys.executable, "-c", DEPTH, op, str(depth)], env=env_for(pkg),
                       capture_output=True, text=True, timeout=900)
    if r.returncode == 0 and r.stdout.strip() == "ok":
        return "ok"
    if r.returncode < 0:
        return f"signal {-r.returncode}"
    last = (r.stderr.strip().splitlines() or ["?"])[-1]
    return last[:100]


def deepest(pkg, op, limit):
    """The deepest nesting that works, within 1%, and what stops the next."""
    if op == "ReprPrint":
        # Its text grows with the square of the depth: searched to 300,000.
        limit = min(limit, 300_000)
    lo, hi, fail = 0, 1000, None
    while True:
        hi = min(hi, limit)
        r = probe(pkg, op, hi)
        if r != "ok":
            fail = r
            break
        if hi == limit:
            return limit, None
        lo, hi = hi, hi * 2
    while hi - lo > max(lo // 100, 1):
        mid = (lo + hi) // 2
        r = probe(pkg, op, mid)
        if r == "ok":
            lo = mid
        else:
            hi, fail = mid, r
    return lo, fail


def main():
    ours_pkg = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/suite/pkg-ours")
    rounds = int(os.environ.get("ROUNDS", "5"))
    limit = int(os.environ.get("DEPTH_LIMIT", "1500000"))
    samples = {"official": [], "ours": []}
    for _ in range(rounds):
        for key, pkg in (("official", None), ("ours", ours_pkg)):
            out = subprocess.run([sys.executable, "-c", TIMING], env=env_for(pkg), check=True,
                                 capture_output=True, text=True)
            samples[key].append(json.loads(out.stdout.strip().splitlines()[-1]))
    libs = {k: v[0]["lib"] for k, v in samples.items()}
    assert libs["official"] != libs["ours"], f"both runs mapped {libs}"
    print(f"official: {libs['official'][0]}\nours:     {libs['ours'][0]}")
    print(f"tree of {samples['ours'][0]['nodes']} nodes, medians of {rounds} runs")
    print(f"{'operation':<24}{'official':>12}{'ours':>12}{'ours/official':>15}")
    for op in ["StructuralEqual", "StructuralHash", "DeepCopy", "ToJSONGraphString",
               "FromJSONGraphString", "StructuralWalk", "StructuralMap"]:
        off = statistics.median(s[op] for s in samples["official"])
        our = statistics.median(s[op] for s in samples["ours"])
        print(f"{op:<24}{off * 1e3:>10.1f}ms{our * 1e3:>10.1f}ms{our / off:>15.2f}")
    if limit == 0:
        return
    print(f"\ndeepest nesting handled on the default 8 MiB stack (search limit {limit:,})")
    print(f"{'operation':<24}{'official':>12}  {'ours':>12}  what stops it (official / ours)")
    for op in DEPTH_OPS:
        off, off_fail = deepest(None, op, limit)
        our, our_fail = deepest(ours_pkg, op, limit)
        print(f"{op:<24}{off:>12,}  {our:>12,}  {off_fail} / {our_fail}")


if __name__ == "__main__":
    main()
