/* Loading an exported artifact set does not copy its constants.
 *
 *   artifact_memory make PATH MIB N   exports a set: a C kernel, MIB MiB of
 *                                     constants for it, N small artifacts
 *                                     of loader "bench"
 *   artifact_memory load PATH         loads it with ffi.ModuleLoadFromFile,
 *                                     calls the kernel (which reads one
 *                                     weight), and prints the set's size and
 *                                     the process's peak and anonymous
 *                                     resident memory (KiB).
 * Ours only: the official library has no artifacts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/artifact.h>

#include "../tensor.h"

static const char* kKernel =
    "#include <tvm/ffi/c_api.h>\n"
    "#include <string.h>\n"
    "static const float* w = 0;\n"
    "int __tvm_ffi___init_constants(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)n;\n"
    "  TVMFFIByteArray name = {\"ffi.MapGetItem\", 14};\n"
    "  TVMFFIObjectHandle get = 0;\n"
    "  if (TVMFFIFunctionGetGlobal(&name, &get) != 0) return -1;\n"
    "  TVMFFIAny args[2]; args[0] = a[0];\n"
    "  memset(&args[1], 0, sizeof(args[1])); args[1].type_index = kTVMFFIRawStr; args[1].v_c_str = \"w0\";\n"
    "  TVMFFIAny t; memset(&t, 0, sizeof(t));\n"
    "  int rc = TVMFFIFunctionCall(get, args, 2, &t);\n"
    "  TVMFFIObjectDecRef(get);\n"
    "  if (rc != 0) return rc;\n"
    "  w = (const float*)((DLTensor*)((char*)t.v_obj + sizeof(TVMFFIObject)))->data;\n"
    "  memset(r, 0, sizeof(*r)); return 0; }\n"
    "int __tvm_ffi_first(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)a; (void)n; memset(r, 0, sizeof(*r));\n"
    "  r->type_index = kTVMFFIFloat; r->v_float64 = w[0]; return 0; }\n";

static void check(int rc, const char* what) {
  if (rc == 0) return;
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  fprintf(stderr, "%s: %.*s\n", what, (int)cell->message.size, cell->message.data);
  exit(1);
}

static TVMFFIAny call(const char* global, TVMFFIAny* args, int n) {
  TVMFFIByteArray b = {global, strlen(global)};
  TVMFFIObjectHandle f = NULL;
  check(TVMFFIFunctionGetGlobal(&b, &f), global);
  TVMFFIAny r;
  memset(&r, 0, sizeof(r));
  check(TVMFFIFunctionCall(f, args, n, &r), global);
  TVMFFIObjectDecRef(f);
  return r;
}

static TVMFFIAny str(const char* s) {
  TVMFFIAny a;
  memset(&a, 0, sizeof(a));
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* The loader of the small artifacts: an empty module. */
static int no_function(void* self, const char* name, TVMFFIObjectHandle* out) {
  (void)self;
  (void)name;
  *out = NULL;
  return 0;
}
static int bench_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  TVMFFIAny margs[5];
  memset(margs, 0, sizeof(margs));
  margs[0] = str("bench");
  margs[1].type_index = kTVMFFIOpaquePtr;
  margs[1].v_ptr = &margs;
  margs[2].type_index = kTVMFFIOpaquePtr;
  margs[2].v_ptr = (void*)no_function;
  *result = call("ffi.ModuleFromExternC", margs, 5);
  return 0;
}

static long status_kib(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof(line), f)) {
    if (strncmp(line, field, strlen(field)) == 0) v = atol(line + strlen(field) + 1);
  }
  if (f) fclose(f);
  return v;
}

static int make(const char* path, long mib, int n) {
  TVMFFIAny fargs[2] = {str("format"), str("c")};
  TVMFFIObjectHandle meta = call("ffi.Map", fargs, 2).v_obj;
  TVMFFIObjectHandle* items = calloc((size_t)n + 2, sizeof(TVMFFIObjectHandle));
  check(TVMFFIArtifactCreate("kern", "native", "kern.c", kKernel, strlen(kKernel), meta, &items[0]),
        "kernel");
  TVMFFIObjectDecRef(meta);
  /* Four tensors of mib/4 MiB each. */
  TVMFFIAny margs[8];
  static DLManagedTensorVersioned managed[4];
  static int64_t shapes[4][1];
  for (int i = 0; i < 4; ++i) {
    shapes[i][0] = mib * 1024 * 1024 / 4 / 4;
    memset(&managed[i], 0, sizeof(managed[i]));
    managed[i].version.major = 1;
    managed[i].dl_tensor = cpu_f32_tensor(calloc((size_t)shapes[i][0], 4), 1, shapes[i]);
    ((float*)managed[i].dl_tensor.data)[0] = 1.5f + (float)i;
    static char names[4][4];
    snprintf(names[i], sizeof(names[i]), "w%d", i);
    margs[2 * i] = str(names[i]);
    memset(&margs[2 * i + 1], 0, sizeof(TVMFFIAny));
    margs[2 * i + 1].type_index = kTVMFFITensor;
    check(TVMFFITensorFromDLPackVersioned(&managed[i], 0, 0, (TVMFFIObjectHandle*)&margs[2 * i + 1].v_obj),
          "tensor");
  }
  TVMFFIObjectHandle constants = call("ffi.Map", margs, 8).v_obj;
  check(TVMFFIArtifactFromConstants("kern", "weights.params", constants, &items[1]), "constants");
  TVMFFIObjectDecRef(constants);
  for (int i = 0; i < 4; ++i) TVMFFIObjectDecRef(margs[2 * i + 1].v_obj);
  char blob[1024], file[32];
  memset(blob, 'x', sizeof(blob));
  for (int i = 0; i < n; ++i) {
    snprintf(file, sizeof(file), "part%04d.bin", i);
    check(TVMFFIArtifactCreate("parts", "bench", file, blob, sizeof(blob), NULL, &items[2 + i]),
          "part");
  }
  TVMFFIObjectHandle set = NULL;
  check(TVMFFIArtifactSetCreate(items, (size_t)n + 2, NULL, &set), "set");
  check(TVMFFIArtifactSetExportLibrary(set, path), "export");
  printf("exported %s: %d artifacts, %ld MiB of constants\n", path, n + 2, mib);
  return 0;
}

static int load(const char* path) {
  TVMFFIObjectHandle loader = NULL;
  check(TVMFFIFunctionCreate(NULL, bench_loader, NULL, &loader), "loader");
  TVMFFIByteArray name = {"ffi.Artifact.loader.bench", strlen("ffi.Artifact.loader.bench")};
  check(TVMFFIFunctionSetGlobal(&name, loader, 0), "register");
  TVMFFIObjectDecRef(loader);
  long anon_before = status_kib("RssAnon:");
  TVMFFIAny p = str(path);
  TVMFFIAny m = call("ffi.ModuleLoadFromFile", &p, 1);
  TVMFFIAny fargs[3];
  memset(fargs, 0, sizeof(fargs));
  fargs[0] = m;
  fargs[1] = str("first");
  fargs[2].type_index = kTVMFFIBool;
  TVMFFIAny f = call("ffi.ModuleGetFunction", fargs, 3);
  TVMFFIAny r;
  memset(&r, 0, sizeof(r));
  check(TVMFFIFunctionCall(f.v_obj, NULL, 0, &r), "first");
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  printf("first weight %g\nartifact_load_peak_rss_kib %ld\nartifact_load_anon_growth_kib %ld\n",
         r.v_float64, u.ru_maxrss, status_kib("RssAnon:") - anon_before);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "make") == 0) return make(argv[2], atol(argv[3]), atoi(argv[4]));
  if (argc == 3 && strcmp(argv[1], "load") == 0) return load(argv[2]);
  fprintf(stderr, "usage: %s make PATH MIB N | load PATH\n", argv[0]);
  return 2;
}
