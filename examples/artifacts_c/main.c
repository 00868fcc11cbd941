/* The artifacts example: what a compiler generated (a C kernel and its
 * weights, kept apart from the code) handed over through the typed C
 * interface, loaded into a module and called, exported as one shared
 * library and as a Model Library Format tarball, and read back.
 *
 *   main OUTPUT_DIR */
#include <tvm/ffi/extra/artifact.h>

#include "host.h"

/* The kernel a compiler would emit: it receives its weights once, through
 * __init_constants, and computes a weighted sum of its four arguments. */
static const char* kKernel =
    "#include <tvm/ffi/c_api.h>\n"
    "#include <string.h>\n"
    "static const float* w = 0;\n"
    "static TVMFFIObjectHandle held = 0;\n"
    "int __tvm_ffi___init_constants(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)n;\n"
    "  TVMFFIByteArray name = {\"ffi.MapGetItem\", 14};\n"
    "  TVMFFIObjectHandle get = 0;\n"
    "  if (TVMFFIFunctionGetGlobal(&name, &get) != 0) return -1;\n"
    "  TVMFFIAny args[2]; args[0] = a[0];\n"
    "  memset(&args[1], 0, sizeof(args[1]));\n"
    "  args[1].type_index = kTVMFFIRawStr; args[1].v_c_str = \"w\";\n"
    "  TVMFFIAny t; memset(&t, 0, sizeof(t));\n"
    "  int rc = TVMFFIFunctionCall(get, args, 2, &t);\n"
    "  TVMFFIObjectDecRef(get);\n"
    "  if (rc != 0) return rc;\n"
    "  held = t.v_obj;\n"
    "  w = (const float*)((DLTensor*)((char*)held + sizeof(TVMFFIObject)))->data;\n"
    "  memset(r, 0, sizeof(*r)); return 0;\n"
    "}\n"
    "int __tvm_ffi_weighted_sum(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s;\n"
    "  if (n != 4) { TVMFFIErrorSetRaisedFromCStr(\"ValueError\", \"weighted_sum expects 4 arguments\"); return -1; }\n"
    "  double sum = 0;\n"
    "  for (int i = 0; i < 4; ++i) sum += w[i] * (double)a[i].v_int64;\n"
    "  memset(r, 0, sizeof(*r)); r->type_index = kTVMFFIFloat; r->v_float64 = sum; return 0;\n"
    "}\n";

static float weights[4] = {0.5f, 1.0f, 2.0f, 4.0f};
static int64_t shape[1] = {4};

/* Prints a str result (a small string in place, or a String object) and
 * releases it. */
static void print_str(const char* label, TVMFFIAny s) {
  if (s.type_index == kTVMFFISmallStr) {
    printf("%s%.*s\n", label, (int)s.small_str_len, s.v_bytes);
  } else if (s.type_index == kTVMFFIStr) {
    const TVMFFIByteArray* b = (const TVMFFIByteArray*)((const char*)s.v_obj + sizeof(TVMFFIObject));
    printf("%s%.*s\n", label, (int)b->size, b->data);
    TVMFFIObjectDecRef(s.v_obj);
  }
}

/* A Map<str, Any> of one entry. */
static TVMFFIObjectHandle map1(const char* key, TVMFFIAny value) {
  TVMFFIAny args[2] = {raw_str(key), value};
  return call_global("ffi.Map", args, 2).v_obj;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  char library[512], tarball[512];
  snprintf(library, sizeof(library), "%s/weighted.so", argv[1]);
  snprintf(tarball, sizeof(tarball), "%s/weighted.tar", argv[1]);

  /* 1. The artifacts: the kernel source and its weights, kept apart. */
  TVMFFIAny format = raw_str("c");
  TVMFFIObjectHandle meta = map1("format", format);
  TVMFFIObjectHandle kernel = NULL;
  check(TVMFFIArtifactCreate("host", "native", "weighted.c", kKernel, strlen(kKernel), meta, &kernel),
        "TVMFFIArtifactCreate");
  TVMFFIObjectDecRef(meta);
  DLManagedTensorVersioned managed;
  memset(&managed, 0, sizeof(managed));
  managed.version.major = 1;
  managed.dl_tensor.data = weights;
  managed.dl_tensor.device.device_type = kDLCPU;
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype.code = kDLFloat;
  managed.dl_tensor.dtype.bits = 32;
  managed.dl_tensor.dtype.lanes = 1;
  managed.dl_tensor.shape = shape;
  TVMFFIAny tensor;
  memset(&tensor, 0, sizeof(tensor));
  tensor.type_index = kTVMFFITensor;
  check(TVMFFITensorFromDLPackVersioned(&managed, 0, 0, (TVMFFIObjectHandle*)&tensor.v_obj), "TensorFromDLPack");
  TVMFFIObjectHandle constants_map = map1("w", tensor);
  TVMFFIObjectDecRef(tensor.v_obj);
  TVMFFIObjectHandle constants = NULL;
  check(TVMFFIArtifactFromConstants("host", "weights.params", constants_map, &constants),
        "TVMFFIArtifactFromConstants");
  TVMFFIObjectDecRef(constants_map);
  TVMFFIObjectHandle items[2] = {kernel, constants};
  TVMFFIObjectHandle set = NULL;
  check(TVMFFIArtifactSetCreate(items, 2, NULL, &set), "TVMFFIArtifactSetCreate");
  printf("artifact set: the kernel source and its weights\n");

  /* 2. Load and call: the kernel got its weights before the load returned. */
  TVMFFIObjectHandle module = NULL;
  check(TVMFFIArtifactSetLoad(set, &module), "TVMFFIArtifactSetLoad");
  printf("loaded: weighted_sum(1, 2, 3, 4) = %g\n", weighted_sum(module));
  TVMFFIArtifactRelease(module);

  /* 3. Export as one shared library, read back without loading, and load it. */
  check(TVMFFIArtifactSetExportLibrary(set, library), "TVMFFIArtifactSetExportLibrary");
  TVMFFIObjectHandle back = NULL;
  check(TVMFFIArtifactSetFromFile(library, &back), "TVMFFIArtifactSetFromFile");
  TVMFFIAny load_args[1] = {raw_str(library)};
  TVMFFIAny loaded = call_global("ffi.ModuleLoadFromFile", load_args, 1);
  printf("exported %s, read back, loaded: weighted_sum(1, 2, 3, 4) = %g\n", library,
         weighted_sum(loaded.v_obj));
  TVMFFIObjectDecRef(loaded.v_obj);
  TVMFFIArtifactRelease(back);

  /* 4. Inspect the library without running it (the functions it exports
   *    and its embedded tree), and the weights artifact. */
  TVMFFIAny inspect_args[1] = {raw_str(library)};
  TVMFFIAny found = call_global("ffi.InspectFile", inspect_args, 1);
  print_str("inspected (functions, module tree): ", call_global("ffi.ReprPrint", &found, 1));
  TVMFFIObjectDecRef(found.v_obj);
  TVMFFIAny weights_artifact = {0};
  weights_artifact.type_index = ((const TVMFFIObject*)constants)->type_index;
  weights_artifact.v_obj = constants;
  print_str("", call_global("ffi.ArtifactInspect", &weights_artifact, 1));

  /* 5. Export as Model Library Format and read it back. */
  check(TVMFFIArtifactSetExportModelLibraryFormat(set, tarball),
        "TVMFFIArtifactSetExportModelLibraryFormat");
  check(TVMFFIArtifactSetFromModelLibraryFormat(tarball, &back),
        "TVMFFIArtifactSetFromModelLibraryFormat");
  check(TVMFFIArtifactSetLoad(back, &module), "TVMFFIArtifactSetLoad");
  printf("Model Library Format %s read back and loaded: weighted_sum(1, 2, 3, 4) = %g\n", tarball,
         weighted_sum(module));
  TVMFFIArtifactRelease(module);
  TVMFFIArtifactRelease(back);

  /* 6. A bad name gets an error that names the field. */
  TVMFFIObjectHandle bad = NULL;
  if (TVMFFIArtifactCreate("host", "native", "../escape.c", "", 0, NULL, &bad) != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
    printf("a bad file name: %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
           (int)cell->message.size, cell->message.data);
    TVMFFIObjectDecRef(err);
  }
  TVMFFIArtifactRelease(set);
  TVMFFIArtifactRelease(kernel);
  TVMFFIArtifactRelease(constants);
  return 0;
}
