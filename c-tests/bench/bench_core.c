/* C benchmark of the core paths, built once against our library and once
 * against the official one (see run.sh). Prints "<path> <ns/op>" lines: the
 * median of 7 repetitions of a timed loop. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "../tensor.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int nop(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  result->type_index = kTVMFFINone;
  return 0;
}

static void noop_deleter(DLManagedTensor* self) { (void)self; }

static void free_managed(DLManagedTensorVersioned* self) { free(self); }

/* An allocator that only hands out a descriptor over a static buffer, so the
 * benchmark measures the library's wrapping, not malloc of the data. */
static float arena[1024];
static int bench_allocator(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                           void (*set_error)(void*, const char*, const char*)) {
  (void)ctx; (void)set_error;
  DLManagedTensorVersioned* m = calloc(1, sizeof(*m));
  m->dl_tensor = *proto;
  m->dl_tensor.data = arena;
  m->dl_tensor.strides = NULL;
  m->deleter = free_managed;
  *out = m;
  return 0;
}

static TVMFFIAny call_global(const char* name, TVMFFIAny* args, int n) {
  TVMFFIByteArray arr = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  TVMFFIAny r;
  memset(&r, 0, sizeof(r));
  TVMFFIFunctionGetGlobal(&arr, &f);
  TVMFFIFunctionCall(f, args, n, &r);
  TVMFFIObjectDecRef(f);
  return r;
}

static TVMFFIObjectHandle global(const char* name) {
  TVMFFIByteArray arr = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  TVMFFIFunctionGetGlobal(&arr, &f);
  return f;
}

static volatile int64_t sink;
/* BENCH_ONLY=<label> BENCH_ITERS=<n> runs one path n times, once (for
 * instruction counts under callgrind: c-tests/bench/ir.sh). */
static const char* only;
static long only_iters;
#define REPS 7
static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}
/* Prints the median over REPS repetitions of the timed loop, in ns/op. */
#define BENCH(label, iters, body)                                 \
  do {                                                            \
    if (only && strcmp(only, label) != 0) break;                  \
    long n_ = only ? only_iters : (iters);                        \
    double per_[REPS];                                            \
    int reps_ = only ? 1 : REPS;                                  \
    for (int rep = 0; rep < reps_; ++rep) {                       \
      double t0 = now_ns();                                       \
      for (long it = 0; it < n_; ++it) { body; }                  \
      per_[rep] = (now_ns() - t0) / (double)(n_ ? n_ : 1);        \
    }                                                             \
    qsort(per_, (size_t)reps_, sizeof(double), cmp_double);       \
    if (!only) printf("%-28s %8.2f\n", label, per_[reps_ / 2]);  \
  } while (0)

int main(void) {
  only = getenv("BENCH_ONLY");
  only_iters = getenv("BENCH_ITERS") ? atol(getenv("BENCH_ITERS")) : 0;
  TVMFFIObjectHandle f = NULL;
  int self = 1;
  if (TVMFFIFunctionCreate(&self, nop, NULL, &f) != 0) return 1;
  /* NULL self and deleter: the callback is installed directly, no trampoline. */
  TVMFFIObjectHandle f_direct = NULL;
  if (TVMFFIFunctionCreate(NULL, nop, NULL, &f_direct) != 0) return 1;
  TVMFFIAny args[3];
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIInt;
  args[1].type_index = kTVMFFIFloat;
  args[2].type_index = kTVMFFIRawStr;
  args[2].v_c_str = "x";
  TVMFFIAny result;
  const long N = 2000000;

  TVMFFIEnvSetStream(kDLCUDA, 0, (void*)0x1234, NULL);
  BENCH("env_get_stream", N, { sink += (int64_t)(intptr_t)TVMFFIEnvGetStream(kDLCUDA, 0); });
  TVMFFIByteArray float32 = {"float32", 7};
  DLDataType dtype;
  BENCH("dtype_from_string", N, { TVMFFIDataTypeFromString(&float32, &dtype); sink += dtype.bits; });
  BENCH("call_0_args", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f, args, 0, &result); });
  BENCH("call_0_args_null_self", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f_direct, args, 0, &result); });
  BENCH("call_1_arg", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f, args, 1, &result); });
  BENCH("call_3_args", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f, args, 3, &result); });

  TVMFFIByteArray name = {"ffi.FunctionRemoveGlobal", strlen("ffi.FunctionRemoveGlobal")};
  BENCH("global_lookup", N, {
    TVMFFIObjectHandle g;
    TVMFFIFunctionGetGlobal(&name, &g);
    TVMFFIObjectDecRef(g);
  });
  BENCH("incref_decref", N, { TVMFFIObjectIncRef(f); TVMFFIObjectDecRef(f); });

  TVMFFIByteArray small = {"hello", 5};
  BENCH("string_small", N, { TVMFFIStringFromByteArray(&small, &result); sink += result.v_int64; });
  const char* text64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  TVMFFIByteArray big = {text64, 64};
  BENCH("string_64_bytes", N, {
    TVMFFIStringFromByteArray(&big, &result);
    TVMFFIObjectDecRef(result.v_obj);
  });
  BENCH("error_raise_fetch", N / 100, {
    TVMFFIObjectHandle err;
    TVMFFIErrorSetRaisedFromCStr("ValueError", "benchmark error");
    TVMFFIErrorMoveFromRaised(&err);
    TVMFFIObjectDecRef(err);
  });

  /* ffi.Shape(1, 2, 3): a built-in global returning an object. */
  TVMFFIObjectHandle shape_fn = global("ffi.Shape");
  TVMFFIAny dims[3];
  memset(dims, 0, sizeof(dims));
  for (int i = 0; i < 3; ++i) {
    dims[i].type_index = kTVMFFIInt;
    dims[i].v_int64 = i + 1;
  }
  BENCH("shape_global", N, {
    result.type_index = kTVMFFINone;
    TVMFFIFunctionCall(shape_fn, dims, 3, &result);
    TVMFFIObjectDecRef(result.v_obj);
  });
  TVMFFIObjectDecRef(shape_fn);

  /* ffi.String("hello"): a built-in global converting a raw C string. */
  TVMFFIObjectHandle string_fn = global("ffi.String");
  TVMFFIAny raw_str;
  memset(&raw_str, 0, sizeof(raw_str));
  raw_str.type_index = kTVMFFIRawStr;
  raw_str.v_c_str = "hello";
  BENCH("global_call_builtin", N, {
    result.type_index = kTVMFFINone;
    TVMFFIFunctionCall(string_fn, &raw_str, 1, &result);
    sink += result.v_int64;
  });
  TVMFFIObjectDecRef(string_fn);

  /* Module load, warm: BENCH_MODULE names a library that stays loaded while
   * it is loaded again and released. */
  const char* module_path = getenv("BENCH_MODULE");
  if (module_path) {
    TVMFFIObjectHandle load = global("ffi.ModuleLoadFromFile");
    TVMFFIAny path;
    memset(&path, 0, sizeof(path));
    path.type_index = kTVMFFIRawStr;
    path.v_c_str = module_path;
    TVMFFIAny held;
    held.type_index = kTVMFFINone;
    if (TVMFFIFunctionCall(load, &path, 1, &held) != 0) return 1;
    BENCH("module_load_warm", N / 200, {
      result.type_index = kTVMFFINone;
      TVMFFIFunctionCall(load, &path, 1, &result);
      TVMFFIObjectDecRef(result.v_obj);
    });
    /* A function of the loaded library, called with one int. */
    TVMFFIObjectHandle get = global("ffi.ModuleGetFunction");
    TVMFFIAny q[3];
    memset(q, 0, sizeof(q));
    q[0] = held;
    q[1].type_index = kTVMFFIRawStr;
    q[1].v_c_str = "add_one";
    q[2].type_index = kTVMFFIBool;
    TVMFFIAny add_one;
    add_one.type_index = kTVMFFINone;
    if (TVMFFIFunctionCall(get, q, 3, &add_one) != 0 || add_one.type_index != kTVMFFIFunction) return 1;
    TVMFFIAny one;
    memset(&one, 0, sizeof(one));
    one.type_index = kTVMFFIInt;
    BENCH("module_call", N, {
      result.type_index = kTVMFFINone;
      TVMFFIFunctionCall(add_one.v_obj, &one, 1, &result);
      sink += result.v_int64;
    });
    TVMFFIObjectDecRef(add_one.v_obj);
    TVMFFIObjectDecRef(get);
    /* Module load, cold: BENCH_COLD_DIR holds copies c0.so ... c399.so of
     * the library, each loaded (for the first time) once and kept, as JIT
     * users keep their kernels (so both libraries see the same number of
     * loaded objects; the official one would otherwise unload each). */
    const char* cold_dir = getenv("BENCH_COLD_DIR");
    if (cold_dir) {
      enum { kCold = 400 };
      static TVMFFIObjectHandle kept[kCold];
      long next = 0;
      char cold_path[4096];
      path.v_c_str = cold_path;
      BENCH("module_load_cold", 50, {
        if (next == kCold) return 1;
        snprintf(cold_path, sizeof(cold_path), "%s/c%ld.so", cold_dir, next);
        result.type_index = kTVMFFINone;
        if (TVMFFIFunctionCall(load, &path, 1, &result) != 0) return 1;
        kept[next++] = result.v_obj;
      });
      for (long i = 0; i < next; ++i) TVMFFIObjectDecRef(kept[i]);
    }
    /* Module reload: BENCH_RELOAD_DIR holds copies r0.so ... r399.so of the
     * library; each iteration links the next copy (a new inode, the same
     * bytes) over <dir>/lib.so, as a rebuild renames its output into
     * place, and loads that path. Ours maps the new file (a reload, from a
     * private link to the checked inode, or a copy where TMPDIR lies on
     * another file system); the official library answers with the image it
     * mapped first, so its figure is a warm load plus the rename. */
    const char* reload_dir = getenv("BENCH_RELOAD_DIR");
    if (reload_dir) {
      enum { kReload = 400 };
      static TVMFFIObjectHandle reloaded[kReload];
      long next = 0;
      char lib_path[4096], copy_path[4096], tmp_path[4096];
      snprintf(lib_path, sizeof(lib_path), "%s/lib.so", reload_dir);
      snprintf(tmp_path, sizeof(tmp_path), "%s/lib.so.tmp", reload_dir);
      path.v_c_str = lib_path;
      TVMFFIAny first;
      first.type_index = kTVMFFINone;
      if (TVMFFIFunctionCall(load, &path, 1, &first) != 0) return 1;
      BENCH("module_reload", 50, {
        if (next == kReload) return 1;
        snprintf(copy_path, sizeof(copy_path), "%s/r%ld.so", reload_dir, next);
        unlink(tmp_path);
        if (link(copy_path, tmp_path) != 0 || rename(tmp_path, lib_path) != 0) return 1;
        result.type_index = kTVMFFINone;
        if (TVMFFIFunctionCall(load, &path, 1, &result) != 0) return 1;
        reloaded[next++] = result.v_obj;
      });
      for (long i = 0; i < next; ++i) TVMFFIObjectDecRef(reloaded[i]);
      TVMFFIObjectDecRef(first.v_obj);
    }
    TVMFFIObjectDecRef(held.v_obj);
    TVMFFIObjectDecRef(load);
  }

  /* Tensors. */
  float data[64];
  int64_t shape[2] = {8, 8};
  DLManagedTensor managed;
  memset(&managed, 0, sizeof(managed));
  managed.dl_tensor = cpu_f32_tensor(data, 2, shape);
  managed.deleter = noop_deleter;
  BENCH("tensor_from_dlpack", N, {
    TVMFFIObjectHandle t;
    TVMFFITensorFromDLPack(&managed, 0, 0, &t);
    TVMFFIObjectDecRef(t);
  });
  TVMFFIEnvSetDLPackManagedTensorAllocator(bench_allocator, 0, NULL);
  DLTensor proto = managed.dl_tensor;
  BENCH("tensor_env_alloc", N, {
    TVMFFIObjectHandle t;
    TVMFFIEnvTensorAlloc(&proto, &t);
    TVMFFIObjectDecRef(t);
  });

  /* Containers through their globals. */
  TVMFFIAny elems[16];
  for (int i = 0; i < 16; ++i) {
    memset(&elems[i], 0, sizeof(elems[i]));
    elems[i].type_index = kTVMFFIInt;
    elems[i].v_int64 = i;
  }
  TVMFFIAny arr = call_global("ffi.Array", elems, 16);
  TVMFFIObjectHandle array_get = global("ffi.ArrayGetItem");
  TVMFFIAny aargs[2] = {arr, elems[7]};
  BENCH("array_get_item", N, { result.type_index = kTVMFFINone; TVMFFIFunctionCall(array_get, aargs, 2, &result); sink += result.v_int64; });

  /* Maps keyed by strings longer than 7 bytes (heap strings) and ints. */
  TVMFFIAny kv[128];
  for (int i = 0; i < 64; ++i) {
    char key[32];
    snprintf(key, sizeof(key), "map-key-%04d", i);
    TVMFFIByteArray k = {key, strlen(key)};
    TVMFFIStringFromByteArray(&k, &kv[2 * i]);
    kv[2 * i + 1] = elems[i % 16];
  }
  TVMFFIObjectHandle map_get = global("ffi.MapGetItem");
  TVMFFIAny small_map = call_global("ffi.Map", kv, 2 * 3);
  TVMFFIAny margs[2] = {small_map, kv[4]};
  BENCH("map_get_item_small", N, { result.type_index = kTVMFFINone; TVMFFIFunctionCall(map_get, margs, 2, &result); sink += result.v_int64; });
  TVMFFIAny dense = call_global("ffi.Map", kv, 2 * 64);
  margs[0] = dense;
  margs[1] = kv[2 * 41];
  BENCH("map_get_item_dense", N, { result.type_index = kTVMFFINone; TVMFFIFunctionCall(map_get, margs, 2, &result); sink += result.v_int64; });
  TVMFFIObjectDecRef(map_get);
  TVMFFIObjectDecRef(array_get);
  TVMFFIObjectDecRef(small_map.v_obj);
  TVMFFIObjectDecRef(dense.v_obj);
  TVMFFIObjectDecRef(arr.v_obj);
  for (int i = 0; i < 64; ++i) TVMFFIObjectDecRef(kv[2 * i].v_obj);
  TVMFFIObjectDecRef(f);
  TVMFFIObjectDecRef(f_direct);
  return (int)(sink & 0);
}
