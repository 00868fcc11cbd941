"""Kernel-DSL quick start, in Python: what a kernel DSL hands to the runtime.

A DSL emits a C kernel (`scale_add`: y = w * x + y, elementwise over
float32 vectors) and its weights `w`, kept apart from the code. Through the
official `tvm_ffi` package running on tvm-ffi-rs it then:

1. makes the two artifacts (`ffi.Artifact`, `ffi.ArtifactFromConstants`) and
   a set of them (`ffi.ArtifactSet`),
2. loads the set into a module (`ffi.ArtifactSetLoad`) and calls the kernel
   on NumPy arrays (shared through DLPack, no copy),
3. exports one shared library and a Model Library Format tarball,
4. inspects both without running them (`ffi.InspectFile`,
   `ffi.ArtifactSetFromFile`, `ffi.ArtifactSetFromModelLibraryFormat`,
   `ffi.ArtifactInspect`),
5. loads the library back and calls it.

    python examples/kernel_dsl.py OUT_DIR      # all of the above
    python examples/kernel_dsl.py --call LIB   # 5 only: works on the official
                                               # runtime too (tvm_ffi.load_module)

Needs the package on our library: `pip install` the wheel of
`scripts/build-wheel.sh` (docs/install.md); `tests/run-all.sh`
runs it that way, then `--call` on the official package.
"""

import os
import sys

import numpy as np
import tvm_ffi

# The kernel the DSL emits. It receives its weights once, through
# __init_constants (the runtime calls it before the load returns), and checks
# every argument it is given: a wrong call is a ValueError, not a crash.
KERNEL = r"""
#include <tvm/ffi/c_api.h>
#include <string.h>

static TVMFFIObjectHandle held;      /* the weights tensor, kept alive */
static const float* w;
static int64_t w_len;

static int fail(const char* message) {
  TVMFFIErrorSetRaisedFromCStr("ValueError", message);
  return -1;
}

/* A float32 vector on the CPU, or NULL. */
static DLTensor* as_vector(const TVMFFIAny* a) {
  DLTensor* t = 0;
  if (a->type_index == kTVMFFITensor) t = (DLTensor*)((char*)a->v_obj + sizeof(TVMFFIObject));
  if (a->type_index == kTVMFFIDLTensorPtr) t = (DLTensor*)a->v_ptr;
  if (!t || t->ndim != 1 || t->device.device_type != kDLCPU) return 0;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) return 0;
  if (t->strides && t->strides[0] != 1) return 0;
  return t;
}

int __tvm_ffi___init_constants(void* self, const TVMFFIAny* args, int n, TVMFFIAny* ret) {
  (void)self;
  if (n != 1) return fail("__init_constants expects the constants map");
  TVMFFIByteArray name = {"ffi.MapGetItem", 14};
  TVMFFIObjectHandle get = 0;
  if (TVMFFIFunctionGetGlobal(&name, &get) != 0) return -1;
  TVMFFIAny call[2];
  call[0] = args[0];
  memset(&call[1], 0, sizeof(call[1]));
  call[1].type_index = kTVMFFIRawStr;
  call[1].v_c_str = "w";
  TVMFFIAny t;
  memset(&t, 0, sizeof(t));
  int rc = TVMFFIFunctionCall(get, call, 2, &t);
  TVMFFIObjectDecRef(get);
  if (rc != 0) return rc;
  DLTensor* v = as_vector(&t);
  if (!v) { TVMFFIObjectDecRef(t.v_obj); return fail("the weights `w` must be a float32 vector"); }
  held = t.v_obj;
  w = (const float*)((const char*)v->data + v->byte_offset);
  w_len = v->shape[0];
  memset(ret, 0, sizeof(*ret));
  return 0;
}

/* y = w * x + y */
int __tvm_ffi_scale_add(void* self, const TVMFFIAny* args, int n, TVMFFIAny* ret) {
  (void)self;
  if (n != 2) return fail("scale_add expects 2 arguments (x, y)");
  DLTensor* x = as_vector(&args[0]);
  DLTensor* y = as_vector(&args[1]);
  if (!x || !y) return fail("scale_add: x and y must be contiguous float32 vectors on the CPU");
  if (!w) return fail("scale_add: the weights were not loaded");
  if (x->shape[0] != w_len || y->shape[0] != w_len) return fail("scale_add: x and y must have the length of w");
  const float* xs = (const float*)((const char*)x->data + x->byte_offset);
  float* ys = (float*)((char*)y->data + y->byte_offset);
  for (int64_t i = 0; i < w_len; ++i) ys[i] += w[i] * xs[i];
  memset(ret, 0, sizeof(*ret));
  return 0;
}
"""

X = np.array([1, 2, 3, 4], dtype="float32")
W = np.array([0.5, 1.0, 1.5, 2.0], dtype="float32")


def call_kernel(module):
    """Runs the kernel once on fresh vectors; returns y."""
    y = np.ones(4, dtype="float32")
    module["scale_add"](tvm_ffi.from_dlpack(X), tvm_ffi.from_dlpack(y))
    return y


def call_library(path):
    """Step 5 on whichever runtime `tvm_ffi` runs on."""
    module = tvm_ffi.load_module(path)
    y = call_kernel(module)
    print(f"{path} loaded with tvm_ffi.load_module: scale_add -> {y.tolist()}")
    assert y.tolist() == (W * X + 1).tolist()
    try:
        module["scale_add"](tvm_ffi.from_dlpack(X))
    except ValueError as e:
        print(f"a wrong call is a ValueError: {e}")


def main(out):
    g = tvm_ffi.get_global_func
    os.makedirs(out, exist_ok=True)

    # 1. Artifacts: the kernel source (loader `native`: compiled and linked
    #    by the runtime) and its weights (the constants format).
    kernel = g("ffi.Artifact")(
        "host", "native", "scale_add.c", KERNEL.encode(),
        {"format": "c", "entry_functions": ["scale_add"]},
    )
    weights = g("ffi.ArtifactFromConstants")("host", "weights.params", {"w": tvm_ffi.from_dlpack(W)})
    artifacts = g("ffi.ArtifactSet")([kernel, weights], {"model_name": "scale_add", "producer": "my-dsl"})
    print(f"artifact set {artifacts.metadata['model_name']!r}:")
    for a in artifacts.artifacts:
        print(f"  {a.codegen_id}/{a.file_name}: loader {a.loader}, {len(a.content)} bytes, "
              f"sha256 {a.metadata['sha256'][:12]}...")

    # 2. Load and call.
    module = g("ffi.ArtifactSetLoad")(artifacts)
    print(f"loaded: scale_add -> {call_kernel(module).tolist()}")

    # 3. Export.
    library = os.path.join(out, "scale_add.so")
    tarball = os.path.join(out, "scale_add.tar")
    g("ffi.ArtifactSetExportLibrary")(artifacts, library)
    g("ffi.ArtifactSetExportModelLibraryFormat")(artifacts, tarball)
    print(f"exported {library} and {tarball}")

    # 4. Inspect without running: the library's functions and embedded
    #    tree, and the artifact set each file records.
    functions, tree = g("ffi.InspectFile")(library)
    print(f"{os.path.basename(library)}: functions {sorted(functions)}")
    print(f"  embedded module tree: {tree}")
    for label, back in (
        (library, g("ffi.ArtifactSetFromFile")(library)),
        (tarball, g("ffi.ArtifactSetFromModelLibraryFormat")(tarball)),
    ):
        names = [f"{a.codegen_id}/{a.file_name}" for a in back.artifacts]
        same = [a.content for a in back.artifacts] == [a.content for a in artifacts.artifacts]
        print(f"{os.path.basename(label)} records {names} (same bytes: {same})")
        assert same
    print(g("ffi.ArtifactInspect")(weights))

    # 5. Load the exported library back and call it.
    call_library(library)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--call":
        call_library(sys.argv[2])
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        main(sys.argv[1])
    else:
        sys.exit(__doc__)
