/* A small library in the TVM-FFI module convention, loaded by test_module.c.
 * It is not linked against libtvm_ffi: the C API resolves at load time to
 * whichever library the host process runs on. With WITH_LIBRARY_BIN it also
 * embeds a module tree: `_lib` importing a `test_kind` module. */
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = NULL;
TVM_FFI_DLL_EXPORT void* plugin_context_value = NULL;

static int return_text(const char* s, TVMFFIAny* result) {
  TVMFFIByteArray a = {s, strlen(s)};
  return TVMFFIStringFromByteArray(&a, result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_add(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n != 2 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add expects two ints");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + args[1].v_int64;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__doc_add(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  return return_text("Adds two integers.", result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_add(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  return return_text("{\"arity\": 2}", result);
}

/* Returns the context symbol the host registered before loading. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_context_value(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = (int64_t)(intptr_t)plugin_context_value;
  return 0;
}

/* call_imported(name, x): finds `name` from this library's imports (or the
 * global registry) and calls it with x. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_call_imported(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n != 2 || args[0].type_index != kTVMFFIRawStr) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call_imported expects (name, x)");
    return -1;
  }
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, args[0].v_c_str, &f) != 0) return -1;
  return TVMFFIFunctionCall(f, (TVMFFIAny*)&args[1], 1, result);
}

#ifdef WITH_LIBRARY_BIN
#define U64(x) (unsigned char)((x) & 0xff), 0, 0, 0, 0, 0, 0, 0
/* nbytes; indptr [0, 1, 1]; children [1]; "_lib"; "test_kind" + "sys_". */
TVM_FFI_DLL_EXPORT const unsigned char __tvm_ffi__library_bin[] = {
    U64(4 * 8 + 2 * 8 + 8 + 4 + 8 + 9 + 8 + 4),
    U64(3), U64(0), U64(1), U64(1),
    U64(1), U64(1),
    U64(4), '_', 'l', 'i', 'b',
    U64(9), 't', 'e', 's', 't', '_', 'k', 'i', 'n', 'd',
    U64(4), 's', 'y', 's', '_',
};
#endif
