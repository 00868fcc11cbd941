/* A small kernel library as a kernel author builds one (-g): one static
 * function doing the work, exported as `spin`, plus `bad` (an invalid read
 * for valgrind to report) and `where` (the file dladdr names for its code).
 * Variants: -DPAD adds 15 MiB of read-only data; -DWITH_DEP calls dep()
 * from a library found through $ORIGIN; -DSELF_LOAD loads its own path
 * through ffi.ModuleLoadFromFile from its constructor. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

static long hot_loop(long n) {
  volatile long acc = 0;
  for (long i = 0; i < n; ++i) acc += i ^ (acc >> 3);
  return acc;
}

static int ret_int(TVMFFIAny* r, long v) {
  r->type_index = kTVMFFIInt;
  r->zero_padding = 0;
  r->v_int64 = v;
  return 0;
}

#ifdef PAD
__attribute__((used)) static const char pad[15 << 20] = {1};
#endif

#ifdef WITH_DEP
long dep(void);
#else
static long dep(void) { return 0; }
#endif

TVM_FFI_DLL_EXPORT int __tvm_ffi_spin(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)self;
  return ret_int(r, hot_loop(n > 0 ? args[0].v_int64 : 1000) + dep());
}

#ifdef SELF_LOAD
__attribute__((constructor)) static void load_self(void) {
  Dl_info info;
  TVMFFIObjectHandle f = NULL, err = NULL;
  TVMFFIByteArray key = {"ffi.ModuleLoadFromFile", 22};
  if (!dladdr((void*)load_self, &info) || TVMFFIFunctionGetGlobal(&key, &f) != 0 || !f) return;
  TVMFFIAny arg, out;
  memset(&arg, 0, sizeof arg);
  memset(&out, 0, sizeof out);
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = info.dli_fname;
  if (TVMFFIFunctionCall(f, &arg, 1, &out) == 0) {
    if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
  } else {
    TVMFFIErrorMoveFromRaised(&err);
    if (err) TVMFFIObjectDecRef(err);
  }
  TVMFFIObjectDecRef(f);
}
#endif

__attribute__((noinline)) static long bad_read(void) {
  long* p = (long*)malloc(4 * sizeof(long));
  free(p);
  return p[1];
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_bad(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)self; (void)args; (void)n;
  return ret_int(r, bad_read() & 0);
}

/* The file dladdr names for this library's code, as a str. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_where(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)self; (void)args; (void)n;
  Dl_info info;
  if (!dladdr((void*)hot_loop, &info) || !info.dli_fname) return ret_int(r, -1);
  TVMFFIByteArray text = {info.dli_fname, strlen(info.dli_fname)};
  return TVMFFIStringFromByteArray(&text, r);
}
