"""Finalizers that call back into the library while it replaces a global,
through the official Python package: a closure registered with
override=True captures an object whose __del__ looks a global up (on its
own thread, or on another thread it waits for, which needs the registry
while this thread holds the GIL); registering the name again releases the
closure. Both libraries return; the transcripts must match (run under a
timeout by the test command: a hang is a failure)."""

import threading

import tvm_ffi

from common import show

NAME = "testing.reentrant_py"


class LooksUpOnDelete:
    """Looks a global up when it is finalized, here or on another thread."""

    def __init__(self, on_thread):
        self.on_thread = on_thread

    def __del__(self):
        def look_up():
            found.append(tvm_ffi.get_global_func("ffi.String") is not None)

        if self.on_thread:
            t = threading.Thread(target=look_up)
            t.start()
            t.join()
        else:
            look_up()


found = []


def closure(on_thread):
    """A function whose only reference to the finalized object is its own."""
    held = LooksUpOnDelete(on_thread)
    return lambda: held is not None


def replace(on_thread):
    tvm_ffi.register_global_func(NAME, closure(on_thread), override=True)
    tvm_ffi.register_global_func(NAME, lambda: 0, override=True)
    return found.pop()


def remove(on_thread):
    tvm_ffi.register_global_func(NAME, closure(on_thread), override=True)
    removed = tvm_ffi.get_global_func("ffi.FunctionRemoveGlobal")(NAME)
    return removed, found.pop()


for on_thread in (False, True):
    where = "another thread" if on_thread else "its thread"
    show(f"override, the finalizer looking up on {where}", lambda: replace(on_thread))
    show(f"remove, the finalizer looking up on {where}", lambda: remove(on_thread))
print("reentrant-py: 4 checks")
