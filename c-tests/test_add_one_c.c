/* The add_one_c kernel of the TVM-FFI compiler-integration guide, compiled
 * unchanged against the C API, created with TVMFFIFunctionCreate and called
 * through TVMFFIFunctionCall with a DLTensor* argument. */
#include "common.h"

int add_one_c(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)result;
  DLTensor *x, *y;
  if (num_args != 2) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "Expects 2 arguments");
    return -1;
  }
  /* Accept a borrowed DLTensor* or a Tensor object (DLTensor after the header). */
  int32_t k = args[0].type_index;
  if (k == kTVMFFIDLTensorPtr) {
    x = (DLTensor*)args[0].v_ptr;
  } else if (k == kTVMFFITensor) {
    x = (DLTensor*)((char*)args[0].v_obj + sizeof(TVMFFIObject));
  } else {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "Expects a Tensor input");
    return -1;
  }
  k = args[1].type_index;
  if (k == kTVMFFIDLTensorPtr) {
    y = (DLTensor*)args[1].v_ptr;
  } else if (k == kTVMFFITensor) {
    y = (DLTensor*)((char*)args[1].v_obj + sizeof(TVMFFIObject));
  } else {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "Expects a Tensor output");
    return -1;
  }
  if (x->ndim != 1 || x->dtype.code != kDLFloat || x->dtype.bits != 32) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "Expects a 1-D float32 tensor");
    return -1;
  }
  /* A real GPU kernel would launch on this stream. */
  void* stream = TVMFFIEnvGetStream(x->device.device_type, x->device.device_id);
  (void)stream;
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    ((float*)y->data)[i] = ((float*)x->data)[i] + 1;
  }
  return 0;
}

int main(void) {
  TVMFFIObjectHandle f = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, add_one_c, NULL, &f));
  float xs[4] = {1, 2, 3, 4}, ys[4] = {0};
  int64_t shape[1] = {4};
  DLTensor x = {xs, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor y = {ys, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIAny args[2] = {any_none(), any_none()};
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &x;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &y;
  void* prev = (void*)1;
  CHECK_OK(TVMFFIEnvSetStream(kDLCPU, 0, (void*)0x1234, &prev));
  CHECK(prev == NULL);
  CHECK(TVMFFIEnvGetStream(kDLCPU, 0) == (void*)0x1234);
  TVMFFIAny result = any_none();
  CHECK_OK(TVMFFIFunctionCall(f, args, 2, &result));
  printf("add_one_c: %g %g %g %g\n", ys[0], ys[1], ys[2], ys[3]);
  CHECK(ys[0] == 2 && ys[3] == 5);
  CHECK_OK(TVMFFIEnvSetStream(kDLCPU, 0, NULL, &prev));
  CHECK(prev == (void*)0x1234);
  /* The same kernel with Tensor objects (imported from DLPack). */
  DLManagedTensor mx = {x, NULL, NULL}, my = {y, NULL, NULL};
  TVMFFIObjectHandle tx = NULL, ty = NULL;
  CHECK_OK(TVMFFITensorFromDLPack(&mx, 0, 0, &tx));
  CHECK_OK(TVMFFITensorFromDLPack(&my, 0, 0, &ty));
  TVMFFIAny targs[2] = {any_none(), any_none()};
  targs[0].type_index = kTVMFFITensor;
  targs[0].v_obj = tx;
  targs[1].type_index = kTVMFFITensor;
  targs[1].v_obj = ty;
  CHECK_OK(TVMFFIFunctionCall(f, targs, 2, &result));
  printf("add_one_c on Tensors: %g %g %g %g\n", ys[0], ys[1], ys[2], ys[3]);
  CHECK(ys[0] == 2 && ys[3] == 5);
  TVMFFIObjectDecRef(tx);
  TVMFFIObjectDecRef(ty);
  x.dtype.bits = 64;
  EXPECT_RAISES("add_one_c on float64", TVMFFIFunctionCall(f, args, 2, &result));
  EXPECT_RAISES("add_one_c with 1 argument", TVMFFIFunctionCall(f, args, 1, &result));
  TVMFFIObjectDecRef(f);
  return 0;
}
