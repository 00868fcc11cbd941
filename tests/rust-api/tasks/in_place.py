"""Task 6 from Python: calls a library's in-place `add_one_into(x, y)` with
NumPy arrays (a good `y`, then a strided, a float64, a wrongly shaped one,
and `y` being `x`) and prints each result and what `y` holds. Run on each
runtime (tests/rust-api/tasks/run.sh). Usage: in_place.py LIBRARY"""

import sys

import numpy as np
import tvm_ffi

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "python"))
from common import show  # noqa: E402


def main():
    f = tvm_ffi.load_module(sys.argv[1]).add_one_into
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = {
        "y": np.zeros((2, 3), np.float32),
        "strided y": np.zeros((2, 6), np.float32)[:, ::2],
        "float64 y": np.zeros((2, 3), np.float64),
        "y of shape (3, 2)": np.zeros((3, 2), np.float32),
    }
    for label, y in cases.items():
        show(f"add_one_into(x, {label})", lambda: f(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y)))
        print(f"  {label} now: {y.tolist()}")
    same = np.arange(3, dtype=np.float32)
    t = tvm_ffi.from_dlpack(same)
    show("add_one_into(x, x)", lambda: f(t, t))
    print(f"  x now: {same.tolist()}")


if __name__ == "__main__":
    main()
