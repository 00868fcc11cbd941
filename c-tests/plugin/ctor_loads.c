/* A library whose constructor loads a module through the C API, as torch
 * extensions and kernel-DSL runtimes do (test_reentrant_ours.c). With
 * CTOR_SYNC_FD it first writes one byte there and waits 200 ms: the test
 * then starts a load on another thread while this constructor holds the
 * system loader's lock. */
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <unistd.h>

/* The constructor's load: 0 once it succeeded, 99 before it ran. */
TVM_FFI_DLL_EXPORT int ctor_load_result = 99;

__attribute__((constructor)) static void load_from_constructor(void) {
  const char* fd = getenv("CTOR_SYNC_FD");
  const char* path = getenv("CTOR_LOAD_PATH");
  if (fd == NULL || path == NULL) return;
  char byte = 1;
  if (write(atoi(fd), &byte, 1) != 1) return;
  usleep(200 * 1000);
  TVMFFIByteArray name = {"ffi.ModuleLoadFromFile", strlen("ffi.ModuleLoadFromFile")};
  TVMFFIObjectHandle load = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &load) != 0 || load == NULL) return;
  TVMFFIAny arg, out;
  memset(&arg, 0, sizeof(arg));
  memset(&out, 0, sizeof(out));
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = path;
  ctor_load_result = TVMFFIFunctionCall(load, &arg, 1, &out);
  if (ctor_load_result == 0) TVMFFIObjectDecRef(out.v_obj);
  TVMFFIObjectDecRef(load);
}
