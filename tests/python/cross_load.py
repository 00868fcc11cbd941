"""Cross-loading with the official runtime: its Python package (from PyPI)
loads our libtvm_ffi.so as a module beside its own library, builds a kernel
library with an embedded module tree through our writer, loads that library
and runs it; and reports our errors as its own exceptions.

    python tests/python/cross_load.py [OUR_LIBRARY]   (default target/release/libtvm_ffi.so)"""

import os
import pathlib
import subprocess
import sys
import tempfile

import common
import tvm_ffi
from common import check

root = pathlib.Path(__file__).resolve().parents[2]
our_lib = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else root / "target" / "release" / "libtvm_ffi.so").resolve()
ours = tvm_ffi.load_module(str(our_lib))
tmp = tempfile.mkdtemp()



# A kernel object file, compiled as any compiler would.
kernel_o = os.path.join(tmp, "kernel.o")
subprocess.check_call(
    ["cc", "-c", "-fPIC", "-O2", "-I", str(root / "include"), str(root / "c-tests" / "plugin" / "plugin.c"), "-o", kernel_o]
)
# The tree: `_lib` importing a custom kind whose loader this process registers.
blob = ours["library_bin_write"]([["_lib", None, [1]], ["test_kind", b"payload-bytes", []]])
check("writer returns bytes", isinstance(blob, bytes) and len(blob) > 8)
seen = []


@tvm_ffi.register_global_func("ffi.Module.load_from_bytes.test_kind")
def _load_test_kind(data):
    seen.append(bytes(data))
    return tvm_ffi.system_lib()


so = os.path.join(tmp, "kernel_with_bin.so")
ours["library_bin_build_shared_library"](blob, [kernel_o], so)
m = tvm_ffi.load_module(so)
check("the official runtime runs a function of our artifact", m["add"](40, 2) == 42)
check("its loader received the payload", seen == [b"payload-bytes"])
check("the import tree was rebuilt", len(m.imports) == 1)

# An artifact set exported by our library (a C kernel, 1 MiB of constants for
# it, 3 small artifacts of a custom loader), loaded by the official runtime:
# the library's bootstrap hands the kernel its constants at dlopen, and
# registers a loader for the set record entry, which that runtime lacks.
tool = os.path.join(tmp, "artifact_memory")
lib_dir = str(our_lib.parent)
subprocess.check_call(
    ["cc", "-O2", "-std=c11", "-I", str(root / "include"), str(root / "c-tests" / "bench" / "artifact_memory.c"),
     "-L", lib_dir, "-Wl,-rpath," + lib_dir, "-ltvm_ffi", "-o", tool]
)
exported = os.path.join(tmp, "artifact_set.so")
subprocess.check_call([tool, "make", exported, "1", "3"], stdout=subprocess.DEVNULL)
m = tvm_ffi.load_module(exported)
check("the official runtime loads an exported artifact set", m["first"]() == 1.5)

functions, modules = ours["inspect_file"](so)
check("inspection lists the exported functions", {"add", "call_imported", "context_value"} <= set(functions))
check("inspection decodes the tree", [list(x) for x in modules] == [["_lib", 0, [1]], ["test_kind", 13, []]])
check("C source variant", "__tvm_ffi__library_bin" in ours["library_bin_to_c_source"](blob))
obj = os.path.join(tmp, "bin.o")
ours["library_bin_write_object"](blob, obj)
functions, modules = ours["inspect_file"](obj)
check("object file variant carries the tree", [list(x) for x in modules][1][0] == "test_kind")
try:
    ours["library_bin_inspect"](b"\x07\x00\x00")
    check("hostile bytes raise", False)
except ValueError as err:
    check("hostile bytes raise a ValueError in the host runtime", "malformed" in str(err))
try:
    ours["library_bin_write"]([["_lib", None, [0]]])
    check("a cyclic tree raises", False)
except ValueError as err:
    check("a cyclic tree raises a ValueError in the host runtime", "cycle" in str(err))
print(f"cross-load: {common.checks} passed, 0 failed")
