"""JSON graphs across runtimes: graphs written by one library (through the
official Python package) read back in the other, and both write the same
bytes for the same values.

usage: python json_graph_cross.py write DIR   # writes DIR/<name>.json
       python json_graph_cross.py read DIR    # reads them back, compares
Run `write` with one library and `read` with the other (tests/run-all.sh
does both directions); `read` also checks that this library writes the
very same text.
"""

import math
import pathlib
import sys

import tvm_ffi
from tvm_ffi import Object
from tvm_ffi.dataclasses import field, py_class


@py_class("json_cross.Var", structural_eq="var")
class Var(Object):
    name: str = field(structural_eq="ignore")


@py_class("json_cross.Node", structural_eq="tree")
class Node(Object):
    op: str
    args: tvm_ffi.Array
    attrs: tvm_ffi.Map
    dtype: tvm_ffi.dtype
    device: tvm_ffi.Device


def values():
    """The values both runtimes serialize, by name (built afresh each call)."""
    x = Var("x")
    shared = Node("add", tvm_ffi.Array([x, 1]), tvm_ffi.Map({}), tvm_ffi.dtype("int32"),
                  tvm_ffi.Device("cpu", 0))
    return {
        "scalars": tvm_ffi.Array([None, True, False, 0, -1, 2**62, 1.5, -0.0, 1e300]),
        "text": tvm_ffi.Array(["", "short", "a string longer than seven bytes \u00e9\u4e2d",
                               b"", b"\x00\xffbytes", "quote\" and \\ and \n"]),
        "kinds": tvm_ffi.Array([tvm_ffi.dtype("bfloat16x4"), tvm_ffi.dtype("float8_e4m3fn"),
                                tvm_ffi.Device("cuda", 3), tvm_ffi.Shape((1, 2, 3))]),
        "maps": tvm_ffi.Map({"a": 1, 2: "b", "nested": tvm_ffi.Map({"k": tvm_ffi.Array([])})}),
        "mutable": tvm_ffi.List([tvm_ffi.Dict({"d": tvm_ffi.List([1])})]),
        "dag": tvm_ffi.Array([shared, shared, Node("mul", tvm_ffi.Array([shared, x]),
                                                   tvm_ffi.Map({"flag": True}),
                                                   tvm_ffi.dtype("float32"),
                                                   tvm_ffi.Device("cuda", 1))]),
        "deep": nested(200),
    }


def nested(depth):
    v = tvm_ffi.Array([0])
    for i in range(depth):
        v = tvm_ffi.Array([i, v])
    return v


def main():
    mode, out = sys.argv[1], pathlib.Path(sys.argv[2])
    to_string = tvm_ffi.get_global_func("ffi.ToJSONGraphString")
    from_string = tvm_ffi.get_global_func("ffi.FromJSONGraphString")
    metadata = tvm_ffi.Map({"producer": "json_graph_cross"})
    checks = 0
    if mode == "write":
        out.mkdir(parents=True, exist_ok=True)
        for name, v in values().items():
            (out / f"{name}.json").write_text(to_string(v, metadata))
            checks += 1
    else:
        for name, v in values().items():
            text = (out / f"{name}.json").read_text()
            back = from_string(text)
            assert tvm_ffi.structural_equal(back, v, map_free_vars=True), f"{name}: read back differs"
            mine = to_string(v, metadata)
            assert mine == text, f"{name}: the two libraries write different graphs\n{mine}\n{text}"
            # Sharing survives: the DAG's shared node is one object again.
            if name == "dag":
                assert back[0].same_as(back[1]) and back[2].args[0].same_as(back[0])
            checks += 1
        assert math.copysign(1.0, from_string((out / "scalars.json").read_text())[7]) < 0
    print(f"json-graph-cross: {checks} {mode} checks")


if __name__ == "__main__":
    main()
