/* C benchmark of library modules, built against each library (run.sh):
 * loading a library with 1000 exported functions (and releasing it), and
 * calling one of its functions; then, with a second argument (the C++
 * custom-module library of the C tests), the paths through a module kind
 * defined in C++: getting a function (a virtual call), calling it, and a
 * kernel's TVMFFIEnvModLookupFromImports. Prints "<path> <ns/op>". */
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

/* Best of 5 runs of `n` iterations of `body`, in ns per iteration. */
#define BEST_NS(n, body)                                     \
  ({                                                         \
    double best_ = 1e30;                                     \
    for (int rep_ = 0; rep_ < 5; ++rep_) {                   \
      double t0_ = now_ns();                                 \
      for (long i_ = 0; i_ < (n); ++i_) { body; }            \
      double per_ = (now_ns() - t0_) / (double)(n);          \
      if (per_ < best_) best_ = per_;                        \
    }                                                        \
    best_;                                                   \
  })

static TVMFFIAny str_arg(const char* s) {
  TVMFFIAny a;
  memset(&a, 0, sizeof(a));
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* ffi.ModuleGetFunction(mod, name, false) (the function, owned). */
static TVMFFIObjectHandle module_function(TVMFFIObjectHandle get, TVMFFIObjectHandle mod,
                                          const char* name) {
  TVMFFIAny q[3];
  memset(q, 0, sizeof(q));
  q[0].type_index = kTVMFFIModule;
  q[0].v_obj = mod;
  q[1] = str_arg(name);
  q[2].type_index = kTVMFFIBool;
  TVMFFIAny f;
  memset(&f, 0, sizeof(f));
  if (TVMFFIFunctionCall(get, q, 3, &f) != 0 || f.type_index != kTVMFFIFunction) return NULL;
  return f.v_obj;
}

/* The C++ custom-module paths (see the header comment). */
static int bench_cxx_module(TVMFFIObjectHandle load, TVMFFIObjectHandle get, const char* path) {
  TVMFFIAny p = str_arg(path), lib, counter, arg, result;
  memset(&lib, 0, sizeof(lib));
  if (TVMFFIFunctionCall(load, &p, 1, &lib) != 0) return 1;
  TVMFFIObjectHandle make = module_function(get, lib.v_obj, "make_counter");
  TVMFFIObjectHandle lookup = module_function(get, lib.v_obj, "lookup_get");
  memset(&arg, 0, sizeof(arg));
  arg.type_index = kTVMFFIInt;
  memset(&counter, 0, sizeof(counter));
  if (make == NULL || lookup == NULL || TVMFFIFunctionCall(make, &arg, 1, &counter) != 0) return 1;
  TVMFFIAny q[3];
  memset(q, 0, sizeof(q));
  q[0] = counter;
  q[1] = str_arg("get");
  q[2].type_index = kTVMFFIBool;
  double per = BEST_NS(200000, {
    result.type_index = kTVMFFINone;
    TVMFFIFunctionCall(get, q, 3, &result);
    TVMFFIObjectDecRef(result.v_obj);
  });
  printf("%-28s %10.2f\n", "cxx_module_get_function", per);
  TVMFFIObjectHandle fn = module_function(get, counter.v_obj, "get");
  if (fn == NULL) return 1;
  volatile int64_t sink = 0;
  per = BEST_NS(2000000, {
    result.type_index = kTVMFFINone;
    TVMFFIFunctionCall(fn, NULL, 0, &result);
    sink += result.v_int64;
  });
  printf("%-28s %10.2f\n", "cxx_module_call", per);
  per = BEST_NS(1000000, {
    result.type_index = kTVMFFINone;
    TVMFFIFunctionCall(lookup, NULL, 0, &result);
    sink += result.v_int64;
  });
  printf("%-28s %10.2f\n", "cxx_lookup_from_imports_call", per);
  TVMFFIObjectDecRef(fn);
  TVMFFIObjectDecRef(make);
  TVMFFIObjectDecRef(lookup);
  TVMFFIObjectDecRef(counter.v_obj);
  TVMFFIObjectDecRef(lib.v_obj);
  return (int)(sink & 0);
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
  if (argc > 2 && bench_cxx_module(load, get, argv[2]) != 0) return 1;
  return (int)(sink & 0);
}
