/* The one tensor the C tests and benchmarks build by hand: float32 on the
 * CPU, compact (no strides), over borrowed data and shape. */
#ifndef TVM_FFI_RS_C_TESTS_TENSOR_H_
#define TVM_FFI_RS_C_TESTS_TENSOR_H_

#include <string.h>
#include <tvm/ffi/c_api.h>

static inline DLTensor cpu_f32_tensor(void* data, int32_t ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

#endif /* TVM_FFI_RS_C_TESTS_TENSOR_H_ */
