"""Artifacts through the official Python package running on our library:
the packed globals bind as any other, the reflected fields read as Python
attributes, errors arrive as Python exceptions, and a loader registered in
Python loads its artifacts. Run with the package whose libtvm_ffi.so is ours
on PYTHONPATH (tests/run-all.sh does)."""

import os
import sys
import tempfile

import numpy as np
import common
import tvm_ffi
from common import check




Artifact = tvm_ffi.get_global_func("ffi.Artifact")
FromConstants = tvm_ffi.get_global_func("ffi.ArtifactFromConstants")
ArtifactSet = tvm_ffi.get_global_func("ffi.ArtifactSet")

kernel = Artifact("host", "npu", "graph.json", b'{"nodes": []}', {"format": "json", "target": "npu"})
check("fields read as attributes", (kernel.codegen_id, kernel.loader, kernel.file_name) == ("host", "npu", "graph.json"))
check("content is bytes", kernel.content == b'{"nodes": []}')
check("sha256 computed", len(kernel.metadata["sha256"]) == 64)
try:
    Artifact("host", "npu", "../graph.json", b"", None)
    check("a path trick is refused", False)
except ValueError as e:
    check("a path trick is a ValueError naming the field", "`file_name`" in str(e))

weights = np.arange(6, dtype="float32").reshape(2, 3)
params = FromConstants("host", "weights.params", {"w": tvm_ffi.from_dlpack(weights)})
check("constants artifact", (params.loader, params.metadata["format"]) == ("constants", "params"))

seen = []


@tvm_ffi.register_global_func("ffi.Artifact.loader.npu")
def _load_npu(artifacts):
    seen.extend(a.file_name for a in artifacts)
    return tvm_ffi.system_lib()


s = ArtifactSet([kernel], {"model_name": "demo"})
check("set metadata filled in", (s.metadata["model_name"], s.metadata["version"]) == ("demo", 1))
m = tvm_ffi.get_global_func("ffi.ArtifactSetLoad")(s)
check("a Python loader loads its artifacts", seen == ["graph.json"] and isinstance(m, tvm_ffi.Module))
check("inspection pretty-prints JSON", '\n  "nodes": [' in tvm_ffi.get_global_func("ffi.ArtifactInspect")(kernel))

tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "demo.tar")
tvm_ffi.get_global_func("ffi.ArtifactSetExportModelLibraryFormat")(ArtifactSet([kernel, params], None), path)
back = tvm_ffi.get_global_func("ffi.ArtifactSetFromModelLibraryFormat")(path)
check(
    "Model Library Format round trip",
    [a.file_name for a in back.artifacts] == ["graph.json", "weights.params"] and back.artifacts[1].content == params.content,
)
print(f"artifacts-python: {common.checks} passed, 0 failed")
