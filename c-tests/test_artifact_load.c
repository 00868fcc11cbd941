/* ffi.ArtifactSetLoad (ours only): a C-source native artifact, a constants
 * artifact for the same codegen and a custom-loader artifact whose loader is
 * registered from C. The constants reach the kernel unchanged and uncopied,
 * exactly once, before any function runs; 8 threads then call concurrently.
 * Then the errors: missing loader, constants without code, no init
 * function, a compiler error, a set made for a newer ABI. */
#include <pthread.h>
#include <unistd.h>

#include "common.h"

static const char* kKernel =
    "#include <tvm/ffi/c_api.h>\n"
    "#include <string.h>\n"
    "static const float* weights = 0;\n"
    "static long long count = 0, inits = 0;\n"
    "static TVMFFIObjectHandle kept = 0;\n"
    "static int set_int(TVMFFIAny* r, long long v) {\n"
    "  memset(r, 0, sizeof(*r)); r->type_index = kTVMFFIInt; r->v_int64 = v; return 0; }\n"
    "int __tvm_ffi___init_constants(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)n; ++inits;\n"
    "  TVMFFIByteArray name = {\"ffi.MapGetItem\", 14};\n"
    "  TVMFFIObjectHandle get = 0;\n"
    "  if (TVMFFIFunctionGetGlobal(&name, &get) != 0) return -1;\n"
    "  TVMFFIAny args[2]; args[0] = a[0];\n"
    "  memset(&args[1], 0, sizeof(args[1])); args[1].type_index = kTVMFFIRawStr; args[1].v_c_str = \"w\";\n"
    "  TVMFFIAny t; memset(&t, 0, sizeof(t));\n"
    "  int rc = TVMFFIFunctionCall(get, args, 2, &t);\n"
    "  TVMFFIObjectDecRef(get);\n"
    "  if (rc != 0) return rc;\n"
    "  kept = t.v_obj;\n"
    "  DLTensor* dl = (DLTensor*)((char*)kept + sizeof(TVMFFIObject));\n"
    "  weights = (const float*)dl->data; count = dl->shape[0] * dl->shape[1];\n"
    "  memset(r, 0, sizeof(*r)); return 0; }\n"
    "int __tvm_ffi_add_one(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)n; return set_int(r, a[0].v_int64 + 1); }\n"
    "int __tvm_ffi_weight_sum(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)a; (void)n; float sum = 0;\n"
    "  for (long long i = 0; i < count; ++i) sum += weights[i];\n"
    "  return set_int(r, (long long)sum); }\n"
    "int __tvm_ffi_weights_address(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)a; (void)n; return set_int(r, (long long)(size_t)weights); }\n"
    "int __tvm_ffi_init_count(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)a; (void)n; return set_int(r, inits); }\n"
    "int __tvm_ffi_release_constants(void* s, const TVMFFIAny* a, int n, TVMFFIAny* r) {\n"
    "  (void)s; (void)a; (void)n; TVMFFIObjectDecRef(kept); kept = 0; weights = 0; count = 0;\n"
    "  return set_int(r, 0); }\n";

static TVMFFIAny bytes_arg(const char* s) {
  TVMFFIByteArray b = byte_array(s);
  TVMFFIAny out = any_none();
  CHECK_OK(TVMFFIBytesFromByteArray(&b, &out));
  return out;
}

static TVMFFIAny meta_format(const char* format) {
  TVMFFIAny args[2] = {any_str("format"), any_str(format)};
  TVMFFIAny m = call_global("ffi.Map", args, 2);
  any_release(&args[0]);
  any_release(&args[1]);
  return m;
}

static TVMFFIAny artifact(const char* codegen, const char* loader, const char* file,
                          const char* content, const char* format) {
  TVMFFIAny args[5] = {any_str(codegen), any_str(loader), any_str(file), bytes_arg(content),
                       meta_format(format)};
  TVMFFIAny a = call_global("ffi.Artifact", args, 5);
  for (int i = 0; i < 5; ++i) any_release(&args[i]);
  return a;
}

static float weights[6] = {1, 2, 3, 4, 5, 6};
static int64_t weight_shape[2] = {2, 3};
static void no_release(DLManagedTensorVersioned* m) { (void)m; }

/* A constants artifact holding one tensor "w" (the weights above). */
static TVMFFIAny constants(const char* codegen) {
  static DLManagedTensorVersioned managed;
  TVMFFIAny tensor = cpu_f32_tensor_value(&managed, no_release, weights, 2, weight_shape);
  TVMFFIAny margs[2] = {any_str("w"), tensor};
  TVMFFIAny map = call_global("ffi.Map", margs, 2);
  any_release(&margs[0]);
  any_release(&tensor);
  TVMFFIAny cargs[3] = {any_str(codegen), any_str("weights.params"), map};
  TVMFFIAny a = call_global("ffi.ArtifactFromConstants", cargs, 3);
  for (int i = 0; i < 3; ++i) any_release(&cargs[i]);
  return a;
}

/* The custom loader: counts the artifacts it gets, answers a module with
 * one function "dsp_id" returning 42. */
static int loader_calls = 0, loader_artifacts = 0;
static int dsp_id(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  *result = any_int(42);
  return 0;
}
static int dsp_get_function(void* self, const char* name, TVMFFIObjectHandle* out) {
  *out = NULL;
  if (strcmp(name, "dsp_id") == 0) return TVMFFIFunctionCreate(self, dsp_id, NULL, out);
  return 0;
}
static TVMFFIAny ptr_arg(void* p) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIOpaquePtr;
  a.v_ptr = p;
  return a;
}
static int my_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)n;
  ++loader_calls;
  TVMFFIAny size_args[1] = {args[0]};
  TVMFFIAny size = call_global("ffi.ArraySize", size_args, 1);
  loader_artifacts = (int)size.v_int64;
  TVMFFIAny margs[5] = {any_str("dsp"), ptr_arg(&loader_calls), ptr_arg((void*)dsp_get_function),
                        any_none(), any_none()};
  *result = call_global("ffi.ModuleFromExternC", margs, 5);
  any_release(&margs[0]);
  return 0;
}

static int64_t call_int(TVMFFIAny module, const char* name, int query_imports, int64_t arg) {
  TVMFFIAny args[3] = {module, any_str(name), any_none()};
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = query_imports;
  TVMFFIAny f = call_global("ffi.ModuleGetFunction", args, 3);
  any_release(&args[1]);
  CHECK(f.type_index == kTVMFFIFunction);
  TVMFFIAny x = any_int(arg), r = any_none();
  CHECK_OK(TVMFFIFunctionCall(f.v_obj, &x, 1, &r));
  any_release(&f);
  return r.v_int64;
}

/* Loads a set of `items` with optional set metadata; returns the code. */
static int load(TVMFFIAny* items, int n, TVMFFIAny set_meta, TVMFFIAny* out) {
  TVMFFIAny array = call_global("ffi.Array", items, n);
  TVMFFIAny sargs[2] = {array, set_meta};
  TVMFFIAny set = call_global("ffi.ArtifactSet", sargs, 2);
  any_release(&array);
  any_release(&set_meta);
  TVMFFIObjectHandle f = get_global("ffi.ArtifactSetLoad");
  *out = any_none();
  int rc = TVMFFIFunctionCall(f, &set, 1, out);
  TVMFFIObjectDecRef(f);
  any_release(&set);
  return rc;
}

static TVMFFIAny module;
static int64_t thread_results[8];
static void* hammer(void* arg) {
  int64_t* out = (int64_t*)arg;
  int64_t sum = 0;
  for (int i = 0; i < 200; ++i) sum += call_int(module, "add_one", 0, i) + call_int(module, "init_count", 0, 0);
  *out = sum;
  return NULL;
}

/* The line of /proc/self/maps whose range holds `addr`, into `out`. */
static int mapping_of(const void* addr, char* out, size_t n) {
  FILE* maps = fopen("/proc/self/maps", "r");
  int found = 0;
  while (maps && !found && fgets(out, (int)n, maps)) {
    unsigned long lo = 0, hi = 0;
    found = sscanf(out, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
  }
  if (maps) fclose(maps);
  return found;
}

int main(void) {
  TVMFFIObjectHandle loader = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, my_loader, NULL, &loader));
  TVMFFIByteArray loader_name = byte_array("ffi.Artifact.loader.myloader");
  CHECK_OK(TVMFFIFunctionSetGlobal(&loader_name, loader, 0));
  TVMFFIObjectDecRef(loader);

  TVMFFIAny items[3] = {artifact("kern", "native", "kern.c", kKernel, "c"), constants("kern"),
                        artifact("dsp", "myloader", "dsp.bin", "DSP", "bin")};
  CHECK_OK(load(items, 3, any_none(), &module));
  printf("loaded: type %d, loader called %d time(s) with %d artifact(s)\n", module.type_index,
         loader_calls, loader_artifacts);
  printf("add_one(41) = %lld\n", (long long)call_int(module, "add_one", 0, 41));
  printf("weight_sum() = %lld\n", (long long)call_int(module, "weight_sum", 0, 0));
  printf("init_count() = %lld\n", (long long)call_int(module, "init_count", 0, 0));
  printf("dsp_id() through the imports = %lld\n", (long long)call_int(module, "dsp_id", 1, 0));
  /* Uncopied: the kernel's weights lie inside the constants artifact's bytes. */
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(((TVMFFIObject*)items[1].v_obj)->type_index);
  const TVMFFIFieldInfo* content_field = &info->fields[3];
  TVMFFIAny content = any_none();
  CHECK_OK(content_field->getter((char*)items[1].v_obj + content_field->offset, &content));
  TVMFFIByteArray bytes = any_text(&content);
  uintptr_t w = (uintptr_t)call_int(module, "weights_address", 0, 0);
  int inside = w >= (uintptr_t)bytes.data && w + sizeof(weights) <= (uintptr_t)bytes.data + bytes.size;
  printf("weights inside the artifact's bytes: %s, equal: %s\n", inside ? "yes" : "no",
         memcmp((const void*)w, weights, sizeof(weights)) == 0 ? "yes" : "no");
  CHECK(inside);
  any_release(&content);

  pthread_t threads[8];
  for (int t = 0; t < 8; ++t) pthread_create(&threads[t], NULL, hammer, &thread_results[t]);
  for (int t = 0; t < 8; ++t) pthread_join(threads[t], NULL);
  for (int t = 0; t < 8; ++t) CHECK(thread_results[t] == 200 * 201 / 2 + 200);
  printf("8 threads: every call answered, init_count() = %lld\n",
         (long long)call_int(module, "init_count", 0, 0));
  call_int(module, "release_constants", 0, 0);
  any_release(&module);

  /* Round trip through an exported library: read back field for field,
   * loaded with plain ffi.ModuleLoadFromFile, and loaded again as a set. */
  TVMFFIAny set_items = call_global("ffi.Array", items, 3);
  TVMFFIAny set_args[2] = {set_items, any_none()};
  TVMFFIAny set = call_global("ffi.ArtifactSet", set_args, 2);
  any_release(&set_items);
  char path[64];
  snprintf(path, sizeof(path), "/tmp/tvm-ffi-rs-test-export-%d.so", (int)getpid());
  TVMFFIAny export_args[2] = {set, any_str(path)};
  TVMFFIAny none = call_global("ffi.ArtifactSetExportLibrary", export_args, 2);
  TVMFFIAny read_args[1] = {export_args[1]};
  TVMFFIAny back = call_global("ffi.ArtifactSetFromFile", read_args, 1);
  TVMFFIAny eq_args[2] = {set, back};
  TVMFFIAny eq = call_global("ffi.RecursiveEq", eq_args, 2);
  printf("exported and read back: equal field for field: %s\n", eq.v_int64 ? "yes" : "no");
  CHECK(eq.type_index == kTVMFFIBool && eq.v_int64 == 1);
  TVMFFIAny loaded = call_global("ffi.ModuleLoadFromFile", read_args, 1);
  printf("ModuleLoadFromFile: add_one(1) = %lld, weight_sum() = %lld, init_count() = %lld, "
         "dsp_id() = %lld, loader calls %d\n",
         (long long)call_int(loaded, "add_one", 0, 1), (long long)call_int(loaded, "weight_sum", 0, 0),
         (long long)call_int(loaded, "init_count", 0, 0), (long long)call_int(loaded, "dsp_id", 1, 0),
         loader_calls);
  /* Uncopied: the weights the kernel sees lie in the exported library's image
   * (the loader's private copy of it, `/memfd:test-export...`). */
  void* image_weights = (void*)(uintptr_t)call_int(loaded, "weights_address", 0, 0);
  char mapping[4096];
  CHECK(mapping_of(image_weights, mapping, sizeof mapping) && strstr(mapping, "test-export") != NULL);
  printf("its weights lie in the library's own image: yes\n");
  call_int(loaded, "release_constants", 0, 0);
  any_release(&loaded);
  TVMFFIObjectHandle fload = get_global("ffi.ArtifactSetLoad");
  TVMFFIAny again = any_none();
  CHECK_OK(TVMFFIFunctionCall(fload, &back, 1, &again));
  TVMFFIObjectDecRef(fload);
  printf("ArtifactSetLoad of the set read back: add_one(2) = %lld, weight_sum() = %lld\n",
         (long long)call_int(again, "add_one", 0, 2), (long long)call_int(again, "weight_sum", 0, 0));
  call_int(again, "release_constants", 0, 0);
  any_release(&again);
  remove(path);
  any_release(&export_args[1]);
  any_release(&back);

  /* Model Library Format: listed by plain tar, read back equal, loadable. */
  snprintf(path, sizeof(path), "/tmp/tvm-ffi-rs-test-mlf-%d.tar", (int)getpid());
  export_args[1] = any_str(path);
  none = call_global("ffi.ArtifactSetExportModelLibraryFormat", export_args, 2);
  char command[128];
  snprintf(command, sizeof(command), "tar -tf %s | sort", path);
  fflush(stdout);
  if (system("command -v tar >/dev/null") == 0) CHECK(system(command) == 0);
  read_args[0] = export_args[1];
  back = call_global("ffi.ArtifactSetFromModelLibraryFormat", read_args, 1);
  eq_args[1] = back;
  eq = call_global("ffi.RecursiveEq", eq_args, 2);
  printf("Model Library Format read back: equal field for field: %s\n", eq.v_int64 ? "yes" : "no");
  CHECK(eq.type_index == kTVMFFIBool && eq.v_int64 == 1);
  fload = get_global("ffi.ArtifactSetLoad");
  CHECK_OK(TVMFFIFunctionCall(fload, &back, 1, &again));
  TVMFFIObjectDecRef(fload);
  printf("ArtifactSetLoad of it: add_one(3) = %lld, weight_sum() = %lld\n",
         (long long)call_int(again, "add_one", 0, 3), (long long)call_int(again, "weight_sum", 0, 0));
  call_int(again, "release_constants", 0, 0);
  any_release(&again);
  remove(path);
  any_release(&export_args[1]);
  any_release(&back);
  any_release(&set);
  (void)none;
  TVMFFIObjectHandle ffrom = get_global("ffi.ArtifactSetFromFile");
  TVMFFIAny not_a_set = any_str("/proc/self/exe");
  EXPECT_RAISES_KIND("FromFile of a file without a set", TVMFFIFunctionCall(ffrom, &not_a_set, 1, &none));
  any_release(&not_a_set);
  TVMFFIObjectDecRef(ffrom);

  TVMFFIAny m = any_none();
  TVMFFIAny missing[1] = {artifact("x", "nosuch", "x.bin", "x", "bin")};
  EXPECT_RAISES("missing loader", load(missing, 1, any_none(), &m));
  any_release(&missing[0]);
  TVMFFIAny orphan[2] = {artifact("kern", "native", "kern.c", kKernel, "c"), constants("zzz")};
  EXPECT_RAISES("constants without code", load(orphan, 2, any_none(), &m));
  for (int i = 0; i < 2; ++i) any_release(&orphan[i]);
  TVMFFIAny noinit[2] = {artifact("k2", "native", "k2.c", "int nothing;", "c"), constants("k2")};
  EXPECT_RAISES("no __init_constants", load(noinit, 2, any_none(), &m));
  for (int i = 0; i < 2; ++i) any_release(&noinit[i]);
  /* The same, exported: the library's bootstrap finds no __init_constants. */
  TVMFFIAny noinit2[2] = {artifact("k2", "native", "k2.c", "int nothing;", "c"), constants("k2")};
  TVMFFIAny noinit_array = call_global("ffi.Array", noinit2, 2);
  TVMFFIAny noinit_args[2] = {noinit_array, any_none()};
  TVMFFIAny noinit_set = call_global("ffi.ArtifactSet", noinit_args, 2);
  char noinit_path[64];
  snprintf(noinit_path, sizeof(noinit_path), "/tmp/tvm-ffi-rs-test-noinit-%d.so", (int)getpid());
  TVMFFIAny noinit_export[2] = {noinit_set, any_str(noinit_path)};
  TVMFFIAny ignored = call_global("ffi.ArtifactSetExportLibrary", noinit_export, 2);
  (void)ignored;
  TVMFFIObjectHandle fload_file = get_global("ffi.ModuleLoadFromFile");
  int noinit_rc = TVMFFIFunctionCall(fload_file, &noinit_export[1], 1, &m);
  char* noinit_error = take_error_kind();
  /* The message names the library's temporary path: print its kind and tail. */
  const char* tail = noinit_error ? strstr(noinit_error, " has constants") : NULL;
  printf("exported, no __init_constants: rc %d raises %.*s...%s\n", noinit_rc,
         noinit_error ? (int)(strchr(noinit_error, ':') - noinit_error) : 0, noinit_error ? noinit_error : "",
         tail ? tail : "(nothing)");
  CHECK(noinit_rc != 0 && tail != NULL);
  free(noinit_error);
  TVMFFIObjectDecRef(fload_file);
  remove(noinit_path);
  any_release(&noinit_export[1]);
  any_release(&noinit_set);
  any_release(&noinit_array);
  for (int i = 0; i < 2; ++i) any_release(&noinit2[i]);
  TVMFFIAny bad[1] = {artifact("k3", "native", "bad.c", "int x = ;", "c")};
  int rc = load(bad, 1, any_none(), &m);
  char* kind = take_error_kind();
  printf("compiler error: rc %d raises %s\n", rc, kind ? kind : "nothing");
  CHECK(rc != 0 && strncmp(kind, "RuntimeError: ", 14) == 0 && strstr(kind, "./k3/bad.c:1:9: error") != NULL);
  free(kind);
  any_release(&bad[0]);
  TVMFFIAny newer_args[2] = {any_str("tvm_ffi_abi"), any_str("999.0")};
  TVMFFIAny newer = call_global("ffi.Map", newer_args, 2);
  any_release(&newer_args[0]);
  any_release(&newer_args[1]);
  TVMFFIAny one[1] = {artifact("x", "myloader", "x.bin", "x", "bin")};
  EXPECT_RAISES("newer ABI", load(one, 1, newer, &m));
  any_release(&one[0]);
  for (int i = 0; i < 3; ++i) any_release(&items[i]);
  printf("artifact-load: ok\n");
  return 0;
}
