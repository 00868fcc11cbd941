"""Structural visitors and mutators, differentially: run with the official
library and with ours (through the official package); the transcripts must
match line for line. `--ours` adds checks where the reference crashes and
ours answers a clear error; they are asserted, not compared.

Every line prints what a caller observes: result types and values, error
kinds and messages, definition regions, remap entries, the error's visit
context and the access paths found from it.
"""

import sys

import common
import tvm_ffi
from common import show
from tvm_ffi import structural_map, structural_mutate, structural_walk, structural_visit
from tvm_ffi.dataclasses import py_class, field
from tvm_ffi import Object


@py_class(structural_eq="var")
class V(Object):
    name: str = field(structural_eq="ignore")

@py_class(structural_eq="tree")
class Fn(Object):
    params: tvm_ffi.Array = field(structural_eq="def")
    body: tvm_ffi.Array

@py_class(structural_eq="dag")
class D(Object):
    x: int

x, y = V("x"), V("y")
f = Fn(tvm_ffi.Array([x]), tvm_ffi.Array([x, y, 3]))
show("map int", lambda: structural_map(f, (int, lambda v: v * 10)).body[2])
show("map var pre", lambda: [v.name for v in structural_map(f, (V, lambda v: V(v.name + "'")), order="pre").body[:2]])
show("map var post", lambda: [v.name for v in structural_map(f, (V, lambda v: V(v.name + "'"))).body[:2]])
show("map same", lambda: structural_map(f, (int, lambda v: v)).same_as(f))
d = D(1)
r = structural_map(tvm_ffi.Array([d, d]), (int, lambda v: v + 1))
show("dag shared", lambda: (r[0].same_as(r[1]), r[0].x))
show("map str", lambda: list(structural_map(tvm_ffi.Array(["a", "long string " * 3, b"b"]), (str, lambda s: s.upper()))))
show("map dict", lambda: dict(structural_map(tvm_ffi.Dict({"a": 1, "b": tvm_ffi.List([2])}), (int, lambda v: -v))))
show("map ret none", lambda: list(structural_map(tvm_ffi.Array([1, 2]), (int, lambda v: None))))
show("mutate err", lambda: structural_mutate(tvm_ffi.Array([1, [2]]), (int, lambda v, m: 1 / 0)))
show("mutate kinds", lambda: structural_mutate(f, (V, lambda v, m: (m.def_region_kind(), v)[1])))
seen = []
structural_mutate(f, (V, lambda v, m: seen.append(int(m.def_region_kind())) or v))
print("regions", seen)
m_calls = []
def cb(v, m):
    m_calls.append(m.var_remap_get(v))
    m.var_remap_set(v, 5)
    m_calls.append(m.var_remap_get(v))
    return v
structural_mutate(tvm_ffi.Array([x]), (V, cb))
print("remap", m_calls)
show("remap bad key", lambda: structural_mutate(tvm_ffi.Array([x]), (V, lambda v, m: m.var_remap_get(1))))
show("with kind", lambda: structural_mutate(x, (V, lambda v, m: m.with_def_region_kind(2, lambda: int(m.def_region_kind())))))
# error contexts: the failing nodes, innermost first, and the paths to them
@py_class(structural_eq="tree")
class Wrap(Object):
    child: Object
    other: Object


inner = D(7)
func = Fn(tvm_ffi.Array([]), tvm_ffi.Array([inner, tvm_ffi.Map({"k": inner})]))
chain = Wrap(Wrap(inner, D(1)), inner)
find = tvm_ffi.get_global_func("ffi.VisitErrorContext.FindAccessPaths")


def boom(v):
    if v == 7:
        raise ValueError("boom")
    return v


for name, run in [
    (f"{kind} {tag}", lambda run=run, root=root: run(root))
    for tag, root in [("array", tvm_ffi.Array([func])), ("chain", chain)]
    for kind, run in [
        ("walk", lambda root: structural_walk(root, (int, boom))),
        ("map", lambda root: structural_map(root, (int, boom))),
        ("mutate", lambda root: structural_mutate(root, (int, lambda v, m: boom(v)))),
        ("visit", lambda root: structural_visit(root, (int, lambda v, vis: boom(v)))),
    ]
]:
    common.checks += 1
    try:
        run()
        print(name, "no error")
    except Exception as e:
        ctx = e.__tvm_ffi_error__.extra_context
        print(name, type(e).__name__, e, type(ctx).__name__)
        print(" pattern", [type(o).__name__ for o in ctx.reverse_visit_pattern])
        for r in (chain, chain.child, func, inner):
            for prefix in (False, True):
                print(" paths", type(r).__name__, prefix, [str(p) for p in find(r, ctx, prefix)])
# walk orders
t = []
structural_walk(tvm_ffi.Array([1, tvm_ffi.Map({"k": 2})]), (object, lambda v: t.append(type(v).__name__)), order="pre")
print("pre", t)
t = []
structural_walk(tvm_ffi.Array([1, tvm_ffi.Map({"k": 2})]), (object, lambda v: t.append(type(v).__name__)))
print("post", t)
show("interrupt", lambda: structural_walk(tvm_ffi.Array([1, 2]), (int, lambda v: tvm_ffi.VisitInterrupt(v) if v == 2 else None)).value)
show("bad hook result", lambda: structural_visit(1, (int, lambda v, vis: 5)))
show("bad walk result", lambda: structural_walk(1, (int, lambda v: "s")))
show("bad order", lambda: structural_walk(1, (int, lambda v: None), order="sideways"))
show("bad table", lambda: tvm_ffi.get_global_func("ffi.StructuralMap")(1, [(1, 2)], [], 0))

# A C++ `__s_visit__` hook (an ffi.Function registered by the official
# testing library) calling back into the visitor through its vtable.
import tvm_ffi.testing  # noqa: E402

make_graph = tvm_ffi.get_global_func("testing.make_visit_region_graph")
for with_hook in (False, True):
    g = make_graph(with_hook)
    seen = []
    structural_walk(g, with_def_region_kind=(int, lambda v, k: seen.append((v, int(k)))), order="pre")
    print("cxx hook walk", with_hook, type(g).__name__, seen)
    seen = []
    r = structural_map(g, with_def_region_kind=(int, lambda v, k: seen.append((v, int(k))) or v + 100))
    print("cxx hook map", with_hook, seen, r.same_as(g), r.simple if hasattr(r, "simple") else None)
    common.checks += 2

print("structural-diff:", common.checks, "checks")

if "--ours" in sys.argv:
    ours_only = 0

    def refused(label, run, needle):
        """`run` must raise a ValueError whose message holds `needle`."""
        global ours_only
        try:
            run()
        except ValueError as e:
            assert needle in str(e), e
            ours_only += 1
            return
        raise AssertionError(f"{label} returned")

    # The reference recurses until the stack overflows (SIGSEGV) on a cycle.
    l = tvm_ffi.List([1])
    l.append(l)
    refused("walk of a cyclic list", lambda: structural_walk(l, (int, lambda v: None)),
            "maximum recursion depth")
    refused("map of a cyclic list", lambda: structural_map(l, (int, lambda v: v)),
            "maximum recursion depth")
    l.clear()

    # Deep nesting: 100,000 levels work through every algorithm, on the main
    # thread and on a thread with a 256 KiB stack (traversals move to fresh
    # stack segments); beyond 2^20 levels they stop with a ValueError. The
    # reference overflows the stack at about 10^4-10^5 levels.
    import os
    import threading

    g = tvm_ffi.get_global_func

    def nest(depth):
        make = g("ffi.Array")
        v = make(0)
        for _ in range(depth):
            v = make(v)
        return v

    deep = nest(100_000)
    deep_text = "[" * 100_000 + "]" * 100_000

    def deep_ops():
        graph = g("ffi.ToJSONGraphString")(deep, None)
        return {
            "StructuralEqual": g("ffi.StructuralEqual")(deep, g("ffi.DeepCopy")(deep), False, False),
            "StructuralHash": isinstance(g("ffi.StructuralHash")(deep, False, False), int),
            "FromJSONGraphString": g("ffi.StructuralEqual")(g("ffi.FromJSONGraphString")(graph), deep, False, False),
            "StructuralWalk": structural_walk(deep, (int, lambda v: None)) is None,
            "StructuralMap": structural_map(deep, (int, lambda v: v + 1)) is not None,
            "RecursiveEq": g("ffi.RecursiveEq")(deep, deep),
            "ReprPrint": len(g("ffi.ReprPrint")(deep)) > 100_000,
            "json.Parse": len(g("ffi.json.Parse")(deep_text)) == 1,
        }

    for where in ("main thread", "256 KiB thread"):
        results = {}
        if where == "main thread":
            results = deep_ops()
        else:
            threading.stack_size(256 * 1024)
            t = threading.Thread(target=lambda: results.update(deep_ops()))
            t.start()
            t.join()
            threading.stack_size(0)
        for name, ok in results.items():
            assert ok, f"{name} at 100,000 levels on the {where}"
            ours_only += 1
    refused("json.Parse of 1,100,000 levels",
            lambda: g("ffi.json.Parse")("[" * 1_100_000 + "]" * 1_100_000), "depth")
    refused("StructuralHash of 1,100,000 levels",
            lambda: g("ffi.StructuralHash")(nest(1_100_000), False, False), "depth")
    print("structural-ours-only:", ours_only, "checks")
    sys.stdout.flush()
    # Skip tearing down the deep values (ours releases them on stack segments
    # too, but it takes a while).
    os._exit(0)
