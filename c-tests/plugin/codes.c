/* Library functions that answer a failure and raise nothing, one code each
 * (test_reentrant.c, test_reentrant_ours.c): the caller sees -1. */
#include <limits.h>
#include <tvm/ffi/c_api.h>

#define ANSWER(name, code)                                                                     \
  TVM_FFI_DLL_EXPORT int __tvm_ffi_##name(void* self, const TVMFFIAny* args, int32_t n,         \
                                          TVMFFIAny* result) {                                  \
    (void)self;                                                                                \
    (void)args;                                                                                \
    (void)n;                                                                                   \
    (void)result;                                                                              \
    return code;                                                                               \
  }

ANSWER(answer_1, 1)
ANSWER(answer_m1, -1)
ANSWER(answer_m2, -2)
ANSWER(answer_m3, -3)
ANSWER(answer_int_min, INT_MIN)
ANSWER(answer_int_max, INT_MAX)
