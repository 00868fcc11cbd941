/* The last step of the artifacts example, on its own: a C host that loads
 * the exported library and calls its kernel through the official C API
 * only, so the same source builds against the official libtvm_ffi.so and
 * against ours (the example runs both when it knows where the official one
 * is: TVM_FFI_OFFICIAL_DIR, the official wheel's `tvm_ffi` directory).
 *
 *   call_library LIBRARY */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "host.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    return 2;
  }
  Dl_info runtime;
  if (dladdr((void*)&TVMFFIFunctionCall, &runtime) == 0) runtime.dli_fname = "(unknown)";
  TVMFFIAny args[1] = {raw_str(argv[1])};
  TVMFFIAny module = call_global("ffi.ModuleLoadFromFile", args, 1);
  printf("on %s: %s loaded, weighted_sum(1, 2, 3, 4) = %g\n", runtime.dli_fname, argv[1],
         weighted_sum(module.v_obj));
  TVMFFIObjectDecRef(module.v_obj);
  return 0;
}
