/* What the artifacts example's two C hosts share: error reporting, calls to
 * packed globals, and the call of the kernel they load. Only the official
 * C API (tvm/ffi/c_api.h) is used, so `call_library.c` builds against the
 * official library as well as ours. */
#ifndef TVM_FFI_EXAMPLES_ARTIFACTS_HOST_H_
#define TVM_FFI_EXAMPLES_ARTIFACTS_HOST_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* Stops with the raised error's kind and message on failure. */
static void check(int rc, const char* what) {
  if (rc == 0) return;
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
    fprintf(stderr, "%s failed: %.*s: %.*s\n", what, (int)cell->kind.size, cell->kind.data,
            (int)cell->message.size, cell->message.data);
  }
  exit(1);
}

/* Calls the packed global `name`. */
static TVMFFIAny call_global(const char* name, TVMFFIAny* args, int n) {
  TVMFFIByteArray b = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  check(TVMFFIFunctionGetGlobal(&b, &f), name);
  TVMFFIAny r;
  memset(&r, 0, sizeof(r));
  check(TVMFFIFunctionCall(f, args, n, &r), name);
  TVMFFIObjectDecRef(f);
  return r;
}

static TVMFFIAny raw_str(const char* s) {
  TVMFFIAny a;
  memset(&a, 0, sizeof(a));
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* Calls module.weighted_sum(1, 2, 3, 4). */
static double weighted_sum(TVMFFIObjectHandle module) {
  TVMFFIAny args[3] = {{0}, raw_str("weighted_sum"), {0}};
  args[0].type_index = kTVMFFIModule;
  args[0].v_obj = module;
  args[2].type_index = kTVMFFIBool;
  TVMFFIAny f = call_global("ffi.ModuleGetFunction", args, 3);
  TVMFFIAny xs[4];
  for (int i = 0; i < 4; ++i) {
    memset(&xs[i], 0, sizeof(xs[i]));
    xs[i].type_index = kTVMFFIInt;
    xs[i].v_int64 = i + 1;
  }
  TVMFFIAny r;
  memset(&r, 0, sizeof(r));
  check(TVMFFIFunctionCall(f.v_obj, xs, 4, &r), "weighted_sum");
  TVMFFIObjectDecRef(f.v_obj);
  return r.v_float64;
}

#endif
