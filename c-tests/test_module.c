/* Library modules: loading through the C API and the ffi.Module* globals,
 * __tvm_ffi_ functions, doc/metadata getters, the library context and
 * context symbols, an embedded module tree dispatched to a registered
 * loader, the system library, lookups from imports, lifetimes and errors. */
#include "common.h"

static void print_text(const char* label, TVMFFIAny v) {
  TVMFFIByteArray t = any_text(&v);
  if (v.type_index == kTVMFFINone) printf("%s: None\n", label);
  else printf("%s: %.*s\n", label, (int)t.size, t.data);
}

static int triple(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)n;
  *result = any_int(args[0].v_int64 * 3);
  return 0;
}

static int negate(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)n;
  *result = any_int(-args[0].v_int64);
  return 0;
}

/* ffi.Module.load_from_bytes.test_kind: the payload names a system library prefix. */
static int load_test_kind(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)n;
  TVMFFIByteArray payload = any_text(&args[0]);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "%.*s", (int)payload.size, payload.data);
  TVMFFIAny p = any_c_str(prefix);
  *result = call_global("ffi.SystemLib", &p, 1);
  return 0;
}

static int64_t call_int(TVMFFIAny f, TVMFFIAny* args, int n) {
  TVMFFIAny r = any_none();
  CHECK_OK(TVMFFIFunctionCall(f.v_obj, args, n, &r));
  return r.v_int64;
}

int main(void) {
  CHECK_OK(TVMFFIEnvModRegisterContextSymbol("plugin_context_value", (void*)0x1234));
  TVMFFIAny path = any_c_str(PLUGIN_PLAIN);
  TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  printf("module type %d\n", mod.type_index);
  print_text("kind", call_global("ffi.ModuleGetKind", &mod, 1));
  printf("property mask %lld\n", (long long)call_global("ffi.ModuleGetPropertyMask", &mod, 1).v_int64);
  /* What a library module says of its formats and source: a DSL decides
   * from these whether it can export a module. */
  TVMFFIAny formats = call_global("ffi.ModuleGetWriteFormats", &mod, 1);
  TVMFFIAny nformats = call_global("ffi.ArraySize", &formats, 1);
  printf("write formats: %lld\n", (long long)nformats.v_int64);
  any_release(&formats);
  TVMFFIAny src_args[2] = {mod, any_c_str("")};
  print_text("inspect source", call_global("ffi.ModuleInspectSource", src_args, 2));
  src_args[1] = any_c_str("c");
  print_text("inspect source (c)", call_global("ffi.ModuleInspectSource", src_args, 2));
  TVMFFIAny q[3] = {mod, any_c_str("add"), any_int(0)};
  printf("implements add %lld, ", (long long)call_global("ffi.ModuleImplementsFunction", q, 3).v_int64);
  q[1] = any_c_str("nope");
  printf("nope %lld\n", (long long)call_global("ffi.ModuleImplementsFunction", q, 3).v_int64);
  q[1] = any_c_str("add");
  TVMFFIAny doc = call_global("ffi.ModuleGetFunctionDoc", q, 3);
  print_text("doc", doc);
  any_release(&doc);
  TVMFFIAny meta = call_global("ffi.ModuleGetFunctionMetadata", q, 3);
  print_text("metadata", meta);
  any_release(&meta);
  q[1] = any_c_str("nope");
  print_text("doc of a missing function", call_global("ffi.ModuleGetFunctionDoc", q, 3));

  TVMFFIAny add = module_function(mod, "add", 0);
  TVMFFIAny two[2] = {any_int(2), any_int(40)};
  printf("add(2, 40) = %lld\n", (long long)call_int(add, two, 2));
  TVMFFIAny none = any_none();
  EXPECT_RAISES("add(None)", TVMFFIFunctionCall(add.v_obj, &none, 1, &two[0]));
  TVMFFIAny missing = module_function(mod, "missing", 1);
  printf("missing function -> type %d\n", missing.type_index);
  TVMFFIAny ctx = module_function(mod, "context_value", 0);
  printf("context symbol filled: %#llx\n", (unsigned long long)call_int(ctx, NULL, 0));
  any_release(&ctx);

  /* Lookups from the library fall back to the global registry. */
  TVMFFIObjectHandle neg = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, negate, NULL, &neg));
  TVMFFIByteArray neg_name = byte_array("test.module.negate");
  CHECK_OK(TVMFFIFunctionSetGlobal(&neg_name, neg, 0));
  TVMFFIObjectDecRef(neg);
  TVMFFIAny ci = module_function(mod, "call_imported", 0);
  TVMFFIAny ci_args[2] = {any_c_str("test.module.negate"), any_int(9)};
  printf("call_imported(negate, 9) = %lld\n", (long long)call_int(ci, ci_args, 2));
  ci_args[0] = any_c_str("test.module.no_such_function");
  EXPECT_RAISES("lookup of a missing function", TVMFFIFunctionCall(ci.v_obj, ci_args, 2, &two[0]));
  any_release(&ci);

  /* A function keeps its library loaded after the module is gone. */
  any_release(&mod);
  two[0] = any_int(1);
  two[1] = any_int(2);
  printf("add after the module is released = %lld\n", (long long)call_int(add, two, 2));
  any_release(&add);

  /* An embedded tree: `_lib` imports a `test_kind` module made by our loader. */
  TVMFFIObjectHandle sys = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, triple, NULL, &sys));
  CHECK_OK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_sys_triple", (void*)triple));
  TVMFFIObjectDecRef(sys);
  TVMFFIAny with_bin = any_c_str(PLUGIN_WITH_BIN);
  EXPECT_RAISES("tree with an unregistered kind", TVMFFIFunctionCall(get_global("ffi.ModuleLoadFromFile"), &with_bin, 1, &two[0]));
  TVMFFIObjectHandle loader = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, load_test_kind, NULL, &loader));
  TVMFFIByteArray loader_name = byte_array("ffi.Module.load_from_bytes.test_kind");
  CHECK_OK(TVMFFIFunctionSetGlobal(&loader_name, loader, 0));
  TVMFFIObjectDecRef(loader);
  TVMFFIAny root = call_global("ffi.ModuleLoadFromFile", &with_bin, 1);
  print_text("root kind", call_global("ffi.ModuleGetKind", &root, 1));
  TVMFFIAny tri = module_function(root, "triple", 0);
  printf("triple without imports -> type %d\n", tri.type_index);
  tri = module_function(root, "triple", 1);
  TVMFFIAny five = any_int(5);
  printf("triple(5) through the imports = %lld\n", (long long)call_int(tri, &five, 1));
  any_release(&tri);
  TVMFFIAny ci2 = module_function(root, "call_imported", 0);
  TVMFFIAny ci2_args[2] = {any_c_str("triple"), any_int(4)};
  printf("call_imported(triple, 4) = %lld\n", (long long)call_int(ci2, ci2_args, 2));
  any_release(&ci2);

  /* Import cycles are refused. */
  TVMFFIAny p = any_c_str("");
  TVMFFIAny sys_mod = call_global("ffi.SystemLib", &p, 1);
  TVMFFIAny imp[2] = {sys_mod, root};
  call_global("ffi.ModuleImportModule", imp, 2);
  imp[0] = root;
  imp[1] = sys_mod;
  EXPECT_RAISES("cyclic import", TVMFFIFunctionCall(get_global("ffi.ModuleImportModule"), imp, 2, &two[0]));
  call_global("ffi.ModuleClearImports", &sys_mod, 1);
  any_release(&sys_mod);
  any_release(&root);

#ifdef OFFICIAL_EXT
  /* A library built with the official C++ headers for the official runtime. */
  TVMFFIAny ext_path = any_c_str(OFFICIAL_EXT);
  TVMFFIAny ext = call_global("ffi.ModuleLoadFromFile", &ext_path, 1);
  TVMFFIAny add_one = module_function(ext, "add_one", 0);
  TVMFFIAny x = any_int(41);
  printf("official-built add_one(41) = %lld\n", (long long)call_int(add_one, &x, 1));
  TVMFFIAny word = any_c_str("x");
  EXPECT_RAISES("official-built add_one('x')", TVMFFIFunctionCall(add_one.v_obj, &word, 1, &two[0]));
  TVMFFIAny greet = module_function(ext, "greet", 0);
  TVMFFIAny who = any_c_str("from a Rust runtime, or not");
  TVMFFIAny greeting = any_none();
  CHECK_OK(TVMFFIFunctionCall(greet.v_obj, &who, 1, &greeting));
  print_text("official-built greet", greeting);
  any_release(&greeting);
  any_release(&greet);
  any_release(&add_one);
  any_release(&ext);
#endif

  /* Files that cannot be loaded. */
  TVMFFIAny bad = any_c_str("/nonexistent/library.so");
  EXPECT_RAISES("missing file", TVMFFIFunctionCall(get_global("ffi.ModuleLoadFromFile"), &bad, 1, &two[0]));
  bad = any_c_str("model.unknownformat");
  EXPECT_RAISES("unknown format", TVMFFIFunctionCall(get_global("ffi.ModuleLoadFromFile"), &bad, 1, &two[0]));
  return 0;
}
