"""Hostile-argument sweep: every `ffi.*` global, called through the official
Python package with random arguments (0 to 3 of them, drawn from plain
values, containers, strings that look like type keys, field names or JSON
graphs, huge integers, tensors, functions). Each call must return or raise;
a crash fails the run (the caller sees the process die).

usage: python sweep_globals.py SEED [ROUNDS]
"""

import random
import sys

import numpy as np
import tvm_ffi

# Globals that take raw C pointers or write files: their contract is the
# caller's, not something random arguments can respect.
SKIP = {
    "ffi.FunctionFromExternC", "ffi.ModuleFromExternC", "ffi.MakeFieldSetter",
    "ffi.MakeFieldGetter", "ffi.LibraryBinBuildSharedLibrary", "ffi.LibraryBinWriteObject",
    "ffi.ModuleWriteToFile", "ffi.FunctionRemoveGlobal", "ffi.ModuleLoadFromFile",
    "ffi.Module.load_from_file.so", "ffi._PyClassRegisterTypeAttrColumns",
    "ffi._RegisterFFIInit", "ffi.InspectFile",
}


def main() -> None:
    seed = int(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    rng = random.Random(seed)
    values = [
        None, 0, -1, 2**62, 1.5, float("nan"), "", "x", "a" * 40, b"\xff", [1, 2], {"a": 1},
        tvm_ffi.Array([1, [2]]), tvm_ffi.Map({"k": 1}), tvm_ffi.List([1]), tvm_ffi.Dict({1: 2}),
        tvm_ffi.Shape((1, 2)), tvm_ffi.convert(2**100), tvm_ffi.from_dlpack(np.zeros(3, "float32")),
        tvm_ffi.get_global_func("ffi.ArraySize"),
        '{"root_index":0,"nodes":[{"type":"ffi.Array","data":[0]}]}',
        '{"root_index":0,"nodes":[{"type":"ffi.reflection.AccessPath",'
        '"data":{"parent":0,"step":0,"depth":1}}]}',
        "ffi.reflection.AccessPath", "ffi.VisitInterrupt", "kind", "_str_index",
        # callback tables of the structural visitors and mutators
        [(-1, tvm_ffi.get_global_func("ffi.ArraySize"))],
        [(-1, tvm_ffi.get_global_func("ffi.ArraySize"), True)],
        [(0, tvm_ffi.get_global_func("ffi.String"))],
    ]
    names = sorted(
        n for n in tvm_ffi.registry.list_global_func_names()
        if n.startswith("ffi.") and n not in SKIP
    )
    calls = raised = 0
    for name in names:
        f = tvm_ffi.get_global_func(name)
        for n in range(4):
            for _ in range(rounds):
                calls += 1
                try:
                    f(*[rng.choice(values) for _ in range(n)])
                except Exception:  # noqa: BLE001 - any clean error is fine
                    raised += 1
    print(f"sweep seed {seed}: {calls} calls to {len(names)} globals, {raised} raised cleanly")


if __name__ == "__main__":
    main()
