/* The kernel a compiler would emit: an `add_one_c`-style function exported
 * in the TVM-FFI module convention as `__tvm_ffi_add_one_c`, with a doc
 * string getter. It is compiled to an object file and linked, together with
 * the embedded module tree our writer produced, into a shared library. */
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* y[i] = x[i] + 1 for 1-D float32 tensors passed as DLTensor* or Tensor. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_add_one_c(void* self, const TVMFFIAny* args, int32_t num_args,
                                           TVMFFIAny* result) {
  (void)self;
  DLTensor* t[2];
  if (num_args != 2) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "add_one_c expects 2 arguments (x, y)");
    return -1;
  }
  for (int i = 0; i < 2; ++i) {
    if (args[i].type_index == kTVMFFIDLTensorPtr) {
      t[i] = (DLTensor*)args[i].v_ptr;
    } else if (args[i].type_index == kTVMFFITensor) {
      t[i] = (DLTensor*)((char*)args[i].v_obj + sizeof(TVMFFIObject));
    } else {
      TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one_c expects tensors");
      return -1;
    }
  }
  if (t[0]->ndim != 1 || t[0]->dtype.code != kDLFloat || t[0]->dtype.bits != 32) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "add_one_c expects a 1-D float32 tensor");
    return -1;
  }
  /* A GPU kernel would launch on the stream its caller set. */
  (void)TVMFFIEnvGetStream(t[0]->device.device_type, t[0]->device.device_id);
  for (int64_t i = 0; i < t[0]->shape[0]; ++i) {
    ((float*)t[1]->data)[i] = ((float*)t[0]->data)[i] + 1.0f;
  }
  result->type_index = kTVMFFINone;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__doc_add_one_c(void* self, const TVMFFIAny* args, int32_t n,
                                                TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  const char* doc = "y = x + 1 for 1-D float32 tensors";
  TVMFFIByteArray a = {doc, strlen(doc)};
  return TVMFFIStringFromByteArray(&a, result);
}
