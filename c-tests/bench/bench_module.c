/* C benchmark of library modules, built against each library (run.sh):
 * loading a library with 1000 exported functions (and releasing it), and
 * calling one of its functions. Prints "<path> <ns/op>". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static TVMFFIObjectHandle global(const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  TVMFFIFunctionGetGlobal(&n, &f);
  return f;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  TVMFFIObjectHandle load = global("ffi.ModuleLoadFromFile");
  TVMFFIObjectHandle get = global("ffi.ModuleGetFunction");
  TVMFFIAny path;
  memset(&path, 0, sizeof(path));
  path.type_index = kTVMFFIRawStr;
  path.v_c_str = argv[1];
  TVMFFIAny mod;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const int n = 200;
    double t0 = now_ns();
    for (int i = 0; i < n; ++i) {
      memset(&mod, 0, sizeof(mod));
      if (TVMFFIFunctionCall(load, &path, 1, &mod) != 0) return 1;
      TVMFFIObjectDecRef(mod.v_obj);
    }
    double per = (now_ns() - t0) / n;
    if (per < best) best = per;
  }
  printf("%-28s %10.2f\n", "load_1000_function_library", best);

  memset(&mod, 0, sizeof(mod));
  TVMFFIFunctionCall(load, &path, 1, &mod);
  TVMFFIAny q[3];
  memset(q, 0, sizeof(q));
  q[0] = mod;
  q[1].type_index = kTVMFFIRawStr;
  q[1].v_c_str = "f500";
  q[2].type_index = kTVMFFIBool;
  TVMFFIAny f;
  memset(&f, 0, sizeof(f));
  if (TVMFFIFunctionCall(get, q, 3, &f) != 0 || f.type_index != kTVMFFIFunction) return 1;
  TVMFFIAny arg, result;
  memset(&arg, 0, sizeof(arg));
  arg.type_index = kTVMFFIInt;
  arg.v_int64 = 1;
  volatile int64_t sink = 0;
  best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const long n = 2000000;
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) {
      result.type_index = kTVMFFINone;
      TVMFFIFunctionCall(f.v_obj, &arg, 1, &result);
      sink += result.v_int64;
    }
    double per = (now_ns() - t0) / n;
    if (per < best) best = per;
  }
  printf("%-28s %10.2f\n", "call_loaded_function", best);
  TVMFFIObjectDecRef(f.v_obj);
  TVMFFIObjectDecRef(mod.v_obj);
  return (int)(sink & 0);
}
