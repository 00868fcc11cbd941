#!/usr/bin/env python3
"""Compiles the Triton kernels of tests/data/triton with the Triton release
installed (no GPU needed) and copies each cache entry Triton writes (the
cubin, the metadata, the TTIR and source, the group file) into OUT/<kernel>/.

Usage: export-triton-kernels.py OUT. Run by tests/tools/export-triton-kernels.sh,
which installs the release into a venv at a fixed path, so that the paths
Triton records in its metadata and group files are the same on every run.
"""
import os
import shutil
import sys

# The kernels' source, at the fixed path the caller copied it to (Triton
# records the source's path in the TTIR and the cubin's line table).
sys.path.insert(0, os.environ["TRITON_KERNELS_DIR"])
from triton_kernels import KERNELS, compile_kernel

OUT = sys.argv[1]
CACHE = os.environ["TRITON_CACHE_DIR"]


def entries():
    return set(os.listdir(CACHE)) if os.path.isdir(CACHE) else set()


for name, fn, signature, constexprs, options in KERNELS:
    before = entries()
    compiled = compile_kernel(fn, signature, constexprs, options)
    kname = compiled.metadata.name
    # The entry this compile wrote: the one holding the group file that is new.
    new = [d for d in entries() - before if os.path.exists(os.path.join(CACHE, d, f"__grp__{kname}.json"))]
    if len(new) != 1:
        sys.exit(f"{name}: expected one new cache entry, found {new}")
    cache = os.path.join(CACHE, new[0])
    dest = os.path.join(OUT, name)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    for f in [f"{kname}.cubin", f"{kname}.json", f"{kname}.ttir", f"{kname}.source", f"__grp__{kname}.json"]:
        if os.path.exists(os.path.join(cache, f)):
            shutil.copyfile(os.path.join(cache, f), os.path.join(dest, f))
    md = compiled.metadata
    print(name, kname, "warps", md.num_warps, "ctas", md.num_ctas, "shared", md.shared,
          "scratch", getattr(md, "global_scratch_size", None), getattr(md, "profile_scratch_size", None))
