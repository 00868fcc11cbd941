"""Subclasses defined from Python (`tvm_ffi` dataclasses with a parent),
differentially: run with the official library and with ours (through the
official package); the transcripts must match line for line. A receiver
that accepts a type accepts its subclasses (the reference's ancestry check).

`--ours` adds the checks where the reference crashes: a dataclass deriving
from ffi.StructuralVisitor/Mutator puts its first field where the inherited
vtable is; ours refuses it with a TypeError naming the field, asserted, not
compared. Each line shows result types and values, or error kinds and the
first line of their messages.
"""

import copy
import sys

import common
import tvm_ffi
from common import show
from tvm_ffi import Object, core, structural_map, structural_mutate, structural_visit, structural_walk
from tvm_ffi.dataclasses import Enum, IntEnum, StrEnum, py_class



@py_class("subclass_py.Base", structural_eq="tree")
class Base(Object):
    a: int


@py_class("subclass_py.Child", structural_eq="tree")
class Child(Base):
    b: str


@py_class("subclass_py.GrandChild", structural_eq="tree")
class GrandChild(Child):
    c: float


@py_class("subclass_py.Holder", structural_eq="tree")
class Holder(Object):
    item: Base
    items: tvm_ffi.Array


kids = [Base(1), Child(2, "two"), GrandChild(3, "three", 3.5)]
for k in kids:
    show(f"repr {type(k).__name__}", lambda k=k: repr(k))
    show(f"isinstance Base {type(k).__name__}", lambda k=k: isinstance(k, Base))

# A field typed as the base holds its subclasses; so does a container.
h = Holder(Child(4, "four"), tvm_ffi.Array(kids))
show("holder.item", lambda: h.item)
show("holder.item = GrandChild", lambda: (setattr(h, "item", GrandChild(5, "five", 5.5)), h.item)[1])
show("holder.item = 1", lambda: setattr(h, "item", 1))

# Callbacks keyed by the base type run on the subclasses.
seen = []
show("walk (Base)", lambda: structural_walk(h, (Base, lambda v: seen.append(type(v).__name__))))
print("walk saw", seen)
show("map (Base)", lambda: structural_map(h, (Base, lambda v: Base(v.a * 10))).items)
show("map (Child)", lambda: structural_map(h, (Child, lambda v: Base(-v.a))).items)
show("mutate (Base)", lambda: structural_mutate(h, (Base, lambda v, m: Base(v.a + 100))).items)
visited = []
show("visit (Base)", lambda: structural_visit(h, (Base, lambda v, vis: visited.append(v.a))))
print("visit saw", visited)

# The reflection-driven algorithms read the inherited fields too.
g1, g2 = GrandChild(3, "three", 3.5), GrandChild(3, "three", 3.5)
show("structural_equal", lambda: tvm_ffi.structural_equal(g1, g2))
show("structural_equal changed", lambda: tvm_ffi.structural_equal(g1, GrandChild(3, "3", 3.5)))
show("structural_hash equal", lambda: tvm_ffi.structural_hash(g1) == tvm_ffi.structural_hash(g2))
show("first mismatch", lambda: tvm_ffi.get_first_structural_mismatch(g1, GrandChild(3, "x", 3.5)))
show("deepcopy", lambda: copy.deepcopy(h))
show("json graph", lambda: tvm_ffi.serialization.to_json_graph_str(h))
show("json round trip", lambda: tvm_ffi.structural_equal(
    tvm_ffi.serialization.from_json_graph_str(tvm_ffi.serialization.to_json_graph_str(h)), h))
# Enums: a Python IntEnum/StrEnum is a registered subclass of ffi.IntEnum /
# ffi.StrEnum; fields typed by the base and the base's converter take it.
class Color(IntEnum, type_key="subclass_py.Color"):
    RED = 1
    BLUE = 2


class Mode(StrEnum, type_key="subclass_py.Mode"):
    FAST = "fast"


@py_class("subclass_py.EnumHolder")
class EnumHolder(Object):
    i: IntEnum
    s: StrEnum
    e: Enum


show("enum fields typed by the bases", lambda: EnumHolder(Color.RED, Mode.FAST, Color.BLUE))
show("enum field given an int", lambda: EnumHolder(1, Mode.FAST, Color.BLUE))
for base, value in [("ffi.IntEnum", Color.RED), ("ffi.StrEnum", Mode.FAST), ("ffi.IntEnum", Mode.FAST)]:
    convert = core._lookup_type_attr(core._object_type_key_to_index(base), "__ffi_convert__")
    show(f"{base}.__ffi_convert__({type(value).__name__})", lambda c=convert, v=value: c(v))
print("subclass-py:", common.checks, "checks")

if "--ours" in sys.argv:

    @py_class("subclass_py.MyMutator")
    class MyMutator(tvm_ffi.StructuralMutator):
        note: str

    @py_class("subclass_py.MyVisitor")
    class MyVisitor(tvm_ffi.StructuralVisitor):
        note: str

    ours_only = 0
    m, v = MyMutator("m"), MyVisitor("v")
    for label, run in [
        ("mutator.mutate", lambda: m.mutate(tvm_ffi.Array([1]))),
        ("mutator.default_mutate", lambda: m.default_mutate(tvm_ffi.Array([1]))),
        ("mutator.def_region_kind", lambda: m.def_region_kind()),
        ("visitor.visit", lambda: v.visit(tvm_ffi.Array([1]))),
        ("visitor.default_visit", lambda: v.default_visit(tvm_ffi.Array([1]))),
    ]:
        try:
            run()
            raise AssertionError(f"{label}: accepted a visitor/mutator with no vtable")
        except TypeError as e:
            assert "lays out its field `note` at offset 24" in str(e), str(e)
            print("ours-only: refused", label, "->", str(e).splitlines()[0])
            ours_only += 1
    print("subclass-py-ours-only:", ours_only, "checks")
