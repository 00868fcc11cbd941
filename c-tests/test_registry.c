/* The global function registry and its built-in globals. */
#include "common.h"

static int answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n;
  *result = any_int((int64_t)(intptr_t)self);
  return 0;
}

/* Calls `f` and returns its result, which must be of `type_index`. */
static int64_t call_scalar(TVMFFIObjectHandle f, TVMFFIAny* args, int n, int32_t type_index) {
  TVMFFIAny result = any_none();
  CHECK_OK(TVMFFIFunctionCall(f, args, n, &result));
  CHECK(result.type_index == type_index);
  return result.v_int64;
}

static int64_t call_int(TVMFFIObjectHandle f, TVMFFIAny* args, int n) {
  return call_scalar(f, args, n, kTVMFFIInt);
}

static int has_name(const char* name) {
  TVMFFIObjectHandle lister = get_global("ffi.FunctionListGlobalNamesFunctor");
  TVMFFIAny functor = any_none();
  CHECK_OK(TVMFFIFunctionCall(lister, NULL, 0, &functor));
  CHECK(functor.type_index == kTVMFFIFunction);
  TVMFFIAny arg = any_int(-1);
  int64_t count = call_int(functor.v_obj, &arg, 1);
  int found = 0;
  for (int64_t i = 0; i < count; ++i) {
    arg = any_int(i);
    TVMFFIAny listed = any_none();
    CHECK_OK(TVMFFIFunctionCall(functor.v_obj, &arg, 1, &listed));
    TVMFFIByteArray text = any_text(&listed);
    if (text.size == strlen(name) && memcmp(text.data, name, text.size) == 0) found = 1;
    any_release(&listed);
  }
  any_release(&functor);
  TVMFFIObjectDecRef(lister);
  return found;
}

int main(void) {
  static const char* builtins[] = {
      "ffi.FunctionListGlobalNamesFunctor", "ffi.FunctionRemoveGlobal", "ffi.String",
      "ffi.Bytes", "ffi.FunctionFromExternC", "ffi.GetGlobalFuncMetadata",
      "ffi.GetInvalidObject", "ffi.GetKwargsObject"};
  for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); ++i) {
    TVMFFIObjectDecRef(get_global(builtins[i]));
    printf("builtin %s present\n", builtins[i]);
  }
  TVMFFIByteArray name = byte_array("test.registry.answer");
  TVMFFIObjectHandle out = (TVMFFIObjectHandle)1;
  CHECK_OK(TVMFFIFunctionGetGlobal(&name, &out));
  printf("missing global -> %s\n", out == NULL ? "NULL" : "set");

  TVMFFIObjectHandle f42 = NULL, f43 = NULL;
  CHECK_OK(TVMFFIFunctionCreate((void*)(intptr_t)42, answer, NULL, &f42));
  CHECK_OK(TVMFFIFunctionCreate((void*)(intptr_t)43, answer, NULL, &f43));
  CHECK_OK(TVMFFIFunctionSetGlobal(&name, f42, 0));
  EXPECT_RAISES("duplicate global", TVMFFIFunctionSetGlobal(&name, f43, 0));
  CHECK_OK(TVMFFIFunctionGetGlobal(&name, &out));
  printf("registered -> %lld\n", (long long)call_int(out, NULL, 0));
  TVMFFIObjectDecRef(out);
  CHECK_OK(TVMFFIFunctionSetGlobal(&name, f43, 1));
  CHECK_OK(TVMFFIFunctionGetGlobal(&name, &out));
  printf("overridden -> %lld\n", (long long)call_int(out, NULL, 0));
  TVMFFIObjectDecRef(out);
  printf("listed: %d\n", has_name("test.registry.answer"));

  /* Remove: true once, then false. */
  TVMFFIObjectHandle remove = get_global("ffi.FunctionRemoveGlobal");
  TVMFFIAny arg = any_none();
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = "test.registry.answer";
  printf("remove -> bool %lld\n", (long long)call_scalar(remove, &arg, 1, kTVMFFIBool));
  printf("remove again -> bool %lld\n", (long long)call_scalar(remove, &arg, 1, kTVMFFIBool));
  printf("listed after remove: %d\n", has_name("test.registry.answer"));
  TVMFFIObjectDecRef(remove);

  /* SetGlobalFromMethodInfo keeps name and metadata. */
  TVMFFIMethodInfo info;
  memset(&info, 0, sizeof(info));
  info.name = byte_array("test.registry.with_meta");
  info.doc = byte_array("a documented function");
  info.metadata = byte_array("{\"type_schema\":\"int\"}");
  info.method.type_index = kTVMFFIFunction;
  info.method.v_obj = f42;
  CHECK_OK(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0));
  EXPECT_RAISES("SetGlobalFromMethodInfo of a taken name",
                TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0));
  CHECK_OK(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 1));
  TVMFFIObjectHandle getmeta = get_global("ffi.GetGlobalFuncMetadata");
  arg.v_c_str = "test.registry.with_meta";
  TVMFFIAny meta = any_none();
  CHECK_OK(TVMFFIFunctionCall(getmeta, &arg, 1, &meta));
  TVMFFIByteArray text = any_text(&meta);
  printf("metadata: %.*s\n", (int)text.size, text.data);
  any_release(&meta);
  arg.v_c_str = "test.registry.no_such_function";
  EXPECT_RAISES("metadata of a missing global", TVMFFIFunctionCall(getmeta, &arg, 1, &meta));
  TVMFFIObjectDecRef(getmeta);

  /* FunctionFromExternC wraps a C safe_call given as pointers. */
  TVMFFIObjectHandle from_c = get_global("ffi.FunctionFromExternC");
  TVMFFIAny cargs[3] = {any_none(), any_none(), any_none()};
  cargs[0].type_index = kTVMFFIOpaquePtr;
  cargs[0].v_ptr = (void*)(intptr_t)7;
  cargs[1].type_index = kTVMFFIOpaquePtr;
  cargs[1].v_ptr = (void*)answer;
  TVMFFIAny made = any_none();
  CHECK_OK(TVMFFIFunctionCall(from_c, cargs, 3, &made));
  printf("FunctionFromExternC -> %lld\n", (long long)call_int(made.v_obj, NULL, 0));
  any_release(&made);
  TVMFFIObjectDecRef(from_c);

  /* The invalid and kwargs markers are process-wide singletons. */
  TVMFFIObjectHandle inv = get_global("ffi.GetInvalidObject");
  TVMFFIAny a = any_none(), b = any_none();
  CHECK_OK(TVMFFIFunctionCall(inv, NULL, 0, &a));
  CHECK_OK(TVMFFIFunctionCall(inv, NULL, 0, &b));
  printf("invalid object type_index %d singleton %d\n", a.type_index, a.v_obj == b.v_obj);
  any_release(&a);
  any_release(&b);
  TVMFFIObjectDecRef(inv);

  TVMFFIObjectDecRef(f42);
  TVMFFIObjectDecRef(f43);
  return 0;
}
