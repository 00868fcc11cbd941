/* Modules and artifacts through the C API (ours only: the official library
 * has no writer): a module kind implemented by C callbacks, its tree
 * exported with ffi.ModuleWriteToFile (library_bin, C source, object file,
 * shared library), the shared library loaded back with a registered loader,
 * functions called through the import tree, and the inspector. */
#include "common.h"

typedef struct {
  int64_t factor;
} Scaler;

static int scale(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)n;
  *result = any_int(args[0].v_int64 * ((Scaler*)self)->factor);
  return 0;
}

static int scaler_get_function(void* self, const char* name, TVMFFIObjectHandle* out) {
  *out = NULL;
  if (strcmp(name, "scale") == 0) return TVMFFIFunctionCreate(self, scale, NULL, out);
  return 0;
}

static int scaler_save(void* self, TVMFFIAny* out) {
  char text[32];
  snprintf(text, sizeof(text), "%lld", (long long)((Scaler*)self)->factor);
  TVMFFIByteArray a = byte_array(text);
  return TVMFFIBytesFromByteArray(&a, out);
}

static int deleted = 0;
static void scaler_delete(void* self) {
  free(self);
  ++deleted;
}

static TVMFFIAny ptr_arg(void* p) {
  TVMFFIAny a = any_none();
  if (p) {
    a.type_index = kTVMFFIOpaquePtr;
    a.v_ptr = p;
  }
  return a;
}

static TVMFFIAny str_arg(const char* s) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

static TVMFFIAny make_scaler(int64_t factor) {
  Scaler* s = malloc(sizeof(Scaler));
  s->factor = factor;
  TVMFFIAny args[5] = {str_arg("scaler"), ptr_arg(s), ptr_arg((void*)scaler_get_function),
                       ptr_arg((void*)scaler_save), ptr_arg((void*)scaler_delete)};
  return call_global("ffi.ModuleFromExternC", args, 5);
}

/* ffi.Module.load_from_bytes.scaler: the payload is the factor. */
static int load_scaler(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)n;
  TVMFFIByteArray b = any_text(&args[0]);
  char text[32];
  snprintf(text, sizeof(text), "%.*s", (int)b.size, b.data);
  *result = make_scaler(atoll(text));
  return 0;
}

static int64_t call_scale(TVMFFIAny mod, int64_t x, int query_imports) {
  TVMFFIAny q[3] = {mod, str_arg("scale"), any_none()};
  q[2].type_index = kTVMFFIBool;
  q[2].v_int64 = query_imports;
  TVMFFIAny f = call_global("ffi.ModuleGetFunction", q, 3);
  CHECK(f.type_index == kTVMFFIFunction);
  TVMFFIAny arg = any_int(x), r = any_none();
  CHECK_OK(TVMFFIFunctionCall(f.v_obj, &arg, 1, &r));
  any_release(&f);
  return r.v_int64;
}

static long file_size(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

int main(void) {
  TVMFFIAny mod = make_scaler(7);
  printf("C kind: scale(6) = %lld\n", (long long)call_scale(mod, 6, 0));
  TVMFFIAny kind = call_global("ffi.ModuleGetKind", &mod, 1);
  TVMFFIByteArray k = any_text(&kind);
  printf("kind %.*s, mask %lld\n", (int)k.size, k.data, (long long)call_global("ffi.ModuleGetPropertyMask", &mod, 1).v_int64);

  /* Export the tree in every format. */
  char dir[] = "/tmp/tvm-ffi-artifacts-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  const char* formats[] = {"library_bin", "c", "o", "so"};
  char paths[4][256];
  for (int i = 0; i < 4; ++i) {
    snprintf(paths[i], sizeof(paths[i]), "%s/tree.%s", dir, formats[i]);
    TVMFFIAny w[3] = {mod, str_arg(paths[i]), str_arg(formats[i])};
    call_global("ffi.ModuleWriteToFile", w, 3);
    printf("wrote %s: %s\n", formats[i], file_size(paths[i]) > 0 ? "non-empty" : "MISSING");
  }
  TVMFFIAny bad_fmt[3] = {mod, str_arg(paths[0]), str_arg("zip")};
  EXPECT_RAISES("unknown write format", TVMFFIFunctionCall(get_global("ffi.ModuleWriteToFile"), bad_fmt, 3, &kind));

  /* The object file and the shared library carry the tree. */
  TVMFFIAny obj_path = str_arg(paths[2]);
  TVMFFIAny inspected = call_global("ffi.InspectFile", &obj_path, 1);
  printf("inspect .o: type %d\n", inspected.type_index);
  any_release(&inspected);

  /* A shared library: `_lib` importing a scaler, built by our writer. */
  TVMFFIAny lib_children = any_none(), none_children = any_none();
  TVMFFIAny one = any_int(1);
  lib_children = call_global("ffi.Array", &one, 1);
  none_children = call_global("ffi.Array", NULL, 0);
  TVMFFIByteArray payload_text = byte_array("5");
  TVMFFIAny payload = any_none();
  CHECK_OK(TVMFFIBytesFromByteArray(&payload_text, &payload));
  TVMFFIAny e0[3] = {str_arg("_lib"), any_none(), lib_children};
  TVMFFIAny e1[3] = {str_arg("scaler"), payload, none_children};
  TVMFFIAny entries[2] = {call_global("ffi.Array", e0, 3), call_global("ffi.Array", e1, 3)};
  TVMFFIAny tree = call_global("ffi.Array", entries, 2);
  TVMFFIAny blob = call_global("ffi.LibraryBinWrite", &tree, 1);
  char so_path[256];
  snprintf(so_path, sizeof(so_path), "%s/with_scaler.so", dir);
  TVMFFIAny no_objects = call_global("ffi.Array", NULL, 0);
  TVMFFIAny build[3] = {blob, no_objects, str_arg(so_path)};
  call_global("ffi.LibraryBinBuildSharedLibrary", build, 3);
  TVMFFIAny so_arg = str_arg(so_path);
  EXPECT_RAISES("load before the loader exists", TVMFFIFunctionCall(get_global("ffi.ModuleLoadFromFile"), &so_arg, 1, &kind));
  TVMFFIObjectHandle loader = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, load_scaler, NULL, &loader));
  TVMFFIByteArray loader_name = byte_array("ffi.Module.load_from_bytes.scaler");
  CHECK_OK(TVMFFIFunctionSetGlobal(&loader_name, loader, 0));
  TVMFFIObjectDecRef(loader);
  TVMFFIAny loaded = call_global("ffi.ModuleLoadFromFile", &so_arg, 1);
  printf("loaded library: scale(6) through its import = %lld\n", (long long)call_scale(loaded, 6, 1));

  /* Hostile blobs are rejected with the offset named. */
  TVMFFIByteArray junk = {"\xff\xff\xff\xff\xff\xff\xff\x7f\x00", 9};
  TVMFFIAny junk_bytes = any_none();
  CHECK_OK(TVMFFIBytesFromByteArray(&junk, &junk_bytes));
  EXPECT_RAISES("inspect a hostile blob", TVMFFIFunctionCall(get_global("ffi.LibraryBinInspect"), &junk_bytes, 1, &kind));

  any_release(&junk_bytes);
  any_release(&blob);
  any_release(&tree);
  any_release(&entries[0]);
  any_release(&entries[1]);
  any_release(&payload);
  any_release(&lib_children);
  any_release(&none_children);
  any_release(&no_objects);
  any_release(&kind);
  any_release(&loaded);
  any_release(&mod);
  printf("C module state released: %d\n", deleted);
  return 0;
}
