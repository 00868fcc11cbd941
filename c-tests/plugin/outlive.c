/* A library whose code the objects it makes point into: a closure (its
 * safe_call and deleter live here) and a plain object with a deleter that
 * lives here. Loaded by test_outlive.c, which uses and releases both after
 * releasing every module of this library. Not linked against libtvm_ffi:
 * the C API resolves to the library the host runs on. */
#include <stdlib.h>
#include <tvm/ffi/c_api.h>

static int closure_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = *(int64_t*)self;
  return 0;
}

static void closure_free(void* self) { free(self); }

/* make_closure(x): a function returning x. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_make_closure(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "make_closure expects an int");
    return -1;
  }
  int64_t* value = (int64_t*)malloc(sizeof(int64_t));
  *value = args[0].v_int64;
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionCreate(value, closure_call, closure_free, &f) != 0) return -1;
  result->type_index = kTVMFFIFunction;
  result->zero_padding = 0;
  result->v_obj = (TVMFFIObject*)f;
  return 0;
}

static void object_free(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* make_object(): a plain ffi.Object whose deleter is object_free. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_make_object(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  TVMFFIObject* obj = (TVMFFIObject*)calloc(1, sizeof(TVMFFIObject));
  obj->combined_ref_count = ((uint64_t)1 << 32) | 1; /* one strong, one weak */
  obj->type_index = kTVMFFIObject;
  obj->deleter = object_free;
  result->type_index = kTVMFFIObject;
  result->zero_padding = 0;
  result->v_obj = obj;
  return 0;
}

static int answer_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 42;
  return 0;
}

/* register_global(): registers `testing.outlive_answer` (returns 42), whose
 * code lives here: a library that did so must never be unloaded. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_register_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionCreate(NULL, answer_call, NULL, &f) != 0) return -1;
  TVMFFIByteArray name = {"testing.outlive_answer", 22};
  int rc = TVMFFIFunctionSetGlobal(&name, f, 1);
  TVMFFIObjectDecRef(f);
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return rc;
}
