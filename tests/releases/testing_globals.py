"""Prints what a release's compiled testing library answers: each
`testing.*` global with its metadata, and the result (type and value, or
error kind and message) of calls with small arguments. Run on the release's
own library and on ours, the two transcripts must be the same.

usage: python testing_globals.py   (with the release's package on PYTHONPATH)
"""

import re

import tvm_ffi
import tvm_ffi.testing  # noqa: F401  (loads the testing library)

# Globals not called: they raise a signal, sleep or need a live callback
# (each is still listed with its metadata).
NOT_CALLED = ("testing.run_check_signal", "testing.sleep", "testing.apply")

SAMPLES = [(), (1,), (2.5,), ("text",), (1, 2), ([1, 2],), ({"k": 1},)]


def show(value):
    kind = type(value).__name__
    try:
        text = repr(value)
    except Exception as err:  # a repr that fails is an answer too
        text = f"<repr raised {type(err).__name__}: {err}>"
    # Addresses differ between runs (and between libraries): code and
    # object addresses print as <address>.
    text = re.sub(r"0x[0-9a-fA-F]{6,}|\b\d{10,}\b", "<address>", text)
    return f"{kind} {text}"


def main():
    names = sorted(n for n in tvm_ffi.registry.list_global_func_names() if n.startswith("testing."))
    print(f"{len(names)} testing globals")
    metadata = getattr(tvm_ffi, "get_global_func_metadata", None)
    for name in names:
        meta = ""
        if metadata is not None:
            try:
                meta = metadata(name)
            except Exception as err:
                meta = f"<raised {type(err).__name__}>"
        print(f"{name} {meta}")
        if name in NOT_CALLED:
            continue
        func = tvm_ffi.get_global_func(name)
        for args in SAMPLES:
            try:
                answer = show(func(*args))
            except Exception as err:
                answer = f"raised {type(err).__name__}: {err}"
            print(f"  {name}{args!r}: {answer}")


if __name__ == "__main__":
    main()
