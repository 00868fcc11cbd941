"""Loads the Rust extension example (examples/rust_extension, built with
tvmffi) through the official Python package and prints everything a caller
sees: results with their types, docs and type schemas, object repr,
structural equality and hashing, a JSON graph round trip, keyword
construction, field writes, and each error's kind and message.

Run once on the official library and once on ours (tests/rust-api/extension/
run.sh diffs the two transcripts). Usage: transcript.py LIBRARY
"""

import ctypes
import json
import sys

import numpy as np
import tvm_ffi


def show(label, thunk):
    try:
        value = thunk()
    except Exception as err:  # noqa: BLE001 - the transcript records every kind
        print(f"{label}: raised {type(err).__name__}: {err}")
        return None
    print(f"{label}: {type(value).__name__} {value!r}")
    return value


def main():
    # Loading the library registers its types (before any class names them)
    # and its globals.
    mod = tvm_ffi.load_module(sys.argv[1])
    show("global rust_ext.hello('tvm')", lambda: tvm_ffi.get_global_func("rust_ext.hello")("tvm"))

    @tvm_ffi.register_object("rust_ext.Point")
    class Point(tvm_ffi.Object):
        """The Python view of the Rust `Point` (its fields come from reflection)."""

    names = ["add_one", "add_one_into", "locate", "greet", "saxpy", "total", "make_point", "move_point", "describe", "fail", "panics"]
    for name in names:
        print(f"doc {name}: {mod.get_function_doc(name)!r}" if hasattr(mod, "get_function_doc") else "")
        meta = mod.get_function_metadata(name) if hasattr(mod, "get_function_metadata") else None
        print(f"schema {name}: {json.dumps(meta, sort_keys=True) if meta is not None else None}")

    show("add_one(41)", lambda: mod.add_one(41))
    show("add_one(True)", lambda: mod.add_one(True))
    show("add_one('x')", lambda: mod.add_one("x"))
    show("add_one()", lambda: mod.add_one())
    show("add_one(1, 2)", lambda: mod.add_one(1, 2))
    show("add_one(2**63)", lambda: mod.add_one(2**63))
    show("greet('tvm', 2)", lambda: mod.greet("tvm", 2))
    show("greet('a very long name indeed', 1)", lambda: mod.greet("a very long name indeed", 1))
    show("greet('tvm', -1)", lambda: mod.greet("tvm", -1))
    show("greet(b'tvm', 1)", lambda: mod.greet(b"tvm", 1))
    show("total", lambda: mod.total({"a": 1, "b": 2, "c": 40}, ["a", "c", "zzz"]))
    show("total(wrong map)", lambda: mod.total({"a": "x"}, ["a"]))

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), dtype=np.float32)
    out = show("saxpy", lambda: mod.saxpy(2.0, tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y)))
    if out is not None:
        arr = np.from_dlpack(out)
        print(f"saxpy result: shape {arr.shape} dtype {arr.dtype} values {arr.tolist()}")
    show("saxpy(int64)", lambda: mod.saxpy(2.0, tvm_ffi.from_dlpack(np.arange(6)), tvm_ffi.from_dlpack(y)))
    show("saxpy(shapes)", lambda: mod.saxpy(2.0, tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(np.ones(3, np.float32))))
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    show("saxpy(strided)", lambda: mod.saxpy(1.0, tvm_ffi.from_dlpack(strided), tvm_ffi.from_dlpack(strided)))

    in_place(mod)
    device_tensor(mod)

    p = show("make_point", lambda: mod.make_point(3, 4.5, "p"))
    print(f"fields: x={p.x!r} y={p.y!r} label={p.label!r} type={type(p).__name__}")
    q = show("Point(x=3, y=4.5, label='p')", lambda: Point(x=3, y=4.5, label="p"))
    show("Point(1, label='d') (default y)", lambda: Point(1, label="d"))
    show("Point(x=1) (missing label)", lambda: Point(x=1))
    show("Point(x='a', label='b')", lambda: Point(x="a", label="b"))
    show("Point(1, 2.0, 'a', 4)", lambda: Point(1, 2.0, "a", 4))
    print(f"structural_equal(p, q): {tvm_ffi.structural_equal(p, q)}")
    print(f"structural_hash equal: {tvm_ffi.structural_hash(p) == tvm_ffi.structural_hash(q)}")
    moved = show("move_point(p, 1, 1.0)", lambda: mod.move_point(p, 1, 1.0))
    print(f"structural_equal(p, moved): {tvm_ffi.structural_equal(p, moved)}")
    show("describe(moved)", lambda: mod.describe(moved))
    show("describe(3)", lambda: mod.describe(3))
    graph = tvm_ffi.serialization.to_json_graph_str(moved)
    print(f"json graph: {graph}")
    back = show("from_json_graph_str", lambda: tvm_ffi.serialization.from_json_graph_str(graph))
    print(f"round trip equal: {tvm_ffi.structural_equal(back, moved)}")
    show("describe(round trip)", lambda: mod.describe(back))
    p.label = "renamed"
    print(f"after p.label = 'renamed': {p!r}, Rust sees {mod.describe(p)!r}")
    show("p.x = 9", lambda: setattr(p, "x", 9))
    show("p.label = 5", lambda: setattr(p, "label", 5))

    show("fail(0)", lambda: mod.fail(0))
    show("fail(7)", lambda: mod.fail(7))
    try:
        mod.fail(7)
    except ValueError as err:
        tb = "".join(__import__("traceback").format_tb(err.__traceback__))
        print(f"fail(7) traceback names lib.rs: {'rust_extension/src/lib.rs' in tb}")
        rust = [line.strip() for line in tb.splitlines() if "src/lib.rs" in line]
        print(f"fail(7) traceback's Rust frames: {rust}")
    show("panics('boom')", lambda: mod.panics("boom"))
    show("add_one(1) after the panic", lambda: mod.add_one(1))


def in_place(mod):
    """add_one_into(x, y): writes into a NumPy array the caller allocated;
    refuses a strided, wrong-dtype, wrong-device or wrong-shape `y`, and a
    `y` that is `x` itself."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.zeros((2, 3), dtype=np.float32)
    show("add_one_into(x, y)", lambda: mod.add_one_into(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y)))
    print(f"y after add_one_into: {y.tolist()}")
    strided = np.zeros((2, 6), dtype=np.float32)[:, ::2]
    show("add_one_into(x, strided y)", lambda: mod.add_one_into(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(strided)))
    wrong = np.zeros((2, 3), dtype=np.float64)
    show("add_one_into(x, float64 y)", lambda: mod.add_one_into(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(wrong)))
    short = np.zeros((3, 2), dtype=np.float32)
    show("add_one_into(x, y of shape (3, 2))", lambda: mod.add_one_into(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(short)))
    tx = tvm_ffi.from_dlpack(x)
    show("add_one_into(x, x)", lambda: mod.add_one_into(tx, tx))
    show("add_one_into(x, 3)", lambda: mod.add_one_into(tx, 3))
    print(f"x untouched: {x.tolist()}")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class FakeCudaTensor:
    """A float32 (2, 3) tensor on CUDA device 0 whose data is never read:
    only its DLPack description (an address no CPU code touches)."""

    def __init__(self):
        self.shape = (ctypes.c_int64 * 2)(2, 3)
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.device, t.ndim = 0x7F0000001000, _DLDevice(2, 0), 2
        t.dtype, t.shape, t.byte_offset = _DLDataType(2, 32, 1), self.shape, 256

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **_kwargs):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


def device_tensor(mod):
    """A kernel sees a CUDA tensor (built from DLPack here; nothing runs on a
    GPU) as pointer, layout and device, and the caller's stream."""
    fake = FakeCudaTensor()
    t = show("from_dlpack(CUDA tensor)", lambda: tvm_ffi.from_dlpack(fake))
    if t is None:
        return
    show("locate(CUDA tensor)", lambda: mod.locate(t))
    with tvm_ffi.use_raw_stream(tvm_ffi.device("cuda:0"), 0x5EED):
        show("locate(CUDA tensor) on stream 0x5eed", lambda: mod.locate(t))
    show("add_one_into(CUDA tensor, y)", lambda: mod.add_one_into(t, tvm_ffi.from_dlpack(np.zeros((2, 3), np.float32))))


if __name__ == "__main__":
    main()
