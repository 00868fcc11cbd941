/* The main example: a C kernel in the style of the TVM-FFI compiler guide's
 * `add_one_c`, registered as a global function through libtvm_ffi.so, looked
 * up by name and called with the packed calling convention. */
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* y[i] = x[i] + 1 for 1-D float32 tensors passed as DLTensor* or Tensor. */
static int add_one_c(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
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

/* Prints and releases the raised error. */
static void report_error(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  printf("error raised: %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
         (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(err);
}

int main(void) {
  TVMFFIVersion version;
  TVMFFIGetVersion(&version);
  printf("libtvm_ffi ABI %u.%u.%u\n", version.major, version.minor, version.patch);

  /* Register the kernel as a global function. */
  TVMFFIObjectHandle func = NULL;
  TVMFFIByteArray name = {"example.add_one_c", strlen("example.add_one_c")};
  if (TVMFFIFunctionCreate(NULL, add_one_c, NULL, &func) != 0 ||
      TVMFFIFunctionSetGlobal(&name, func, 0) != 0) {
    report_error();
    return 1;
  }
  TVMFFIObjectDecRef(func); /* the registry holds its own reference */

  /* Anyone in the process can now find it by name and call it. */
  TVMFFIObjectHandle found = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &found) != 0 || found == NULL) return 1;
  float xs[4] = {1, 2, 3, 4}, ys[4] = {0, 0, 0, 0};
  int64_t shape[1] = {4};
  DLTensor x = {xs, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor y = {ys, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIAny args[2];
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &x;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &y;
  TVMFFIAny result;
  memset(&result, 0, sizeof(result));
  if (TVMFFIFunctionCall(found, args, 2, &result) != 0) {
    report_error();
    return 1;
  }
  printf("add_one_c([1 2 3 4]) = [%g %g %g %g]\n", ys[0], ys[1], ys[2], ys[3]);

  /* Errors travel back through the thread-local slot. */
  if (TVMFFIFunctionCall(found, args, 1, &result) != 0) report_error();
  TVMFFIObjectDecRef(found);
  return ys[3] == 5.0f ? 0 : 1;
}
