/* Device code on a GPU through our library alone (tests/gpu/run.sh builds and
 * runs it): the CUDA libraries TVM 0.27 exported (tests/data/tvm) load, and
 * their host functions give the CPU's answer on device memory; kernels run
 * on the current stream, on side streams set with TVMFFIEnvSetStream, from 8
 * threads with their own streams, and under CUDA-graph capture; then the
 * launch overhead of a 3-argument kernel (ns per call), through our module
 * and, when TVM_RUNTIME_CUDA names TVM's libtvm_runtime_cuda.so, through
 * TVM's loader on the same library.
 *
 *   gpu_check DATA_DIR
 *
 * The driver is dlopened as the runtime does; with the fake driver of
 * tests/data/fake_cuda.c on LD_LIBRARY_PATH the same program runs on a
 * machine without a GPU (tests/device_code.rs does). Prints one line per
 * check and `gpu: N checks` at the end; exits 1 on a wrong answer. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

typedef int CUresult;
typedef void* CUhandle;
static struct {
  CUresult (*init)(unsigned);
  CUresult (*retain)(CUhandle*, int);
  CUresult (*set_current)(CUhandle);
  CUresult (*alloc)(uint64_t*, size_t);
  CUresult (*free_)(uint64_t);
  CUresult (*htod)(uint64_t, const void*, size_t);
  CUresult (*dtoh)(void*, uint64_t, size_t);
  CUresult (*stream_create)(CUhandle*, unsigned);
  CUresult (*stream_sync)(CUhandle);
  CUresult (*stream_destroy)(CUhandle);
  CUresult (*begin_capture)(CUhandle, int);
  CUresult (*end_capture)(CUhandle, CUhandle*);
  CUresult (*instantiate)(CUhandle*, CUhandle, unsigned long long);
  CUresult (*graph_launch)(CUhandle, CUhandle);
  CUresult (*ctx_sync)(void);
} cu;

static int checks = 0, wrong = 0;
static void check(int ok, const char* what) {
  ++checks;
  if (!ok) ++wrong;
  printf("%s: %s\n", ok ? "ok" : "WRONG", what);
}

#define N 1024
#define CU(call)                                                    \
  do {                                                              \
    CUresult rc_ = (call);                                          \
    if (rc_ != 0) {                                                 \
      fprintf(stderr, "%s failed: %d\n", #call, rc_);               \
      exit(1);                                                      \
    }                                                               \
  } while (0)

static void* sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "the driver lacks %s\n", name);
    exit(1);
  }
  return p;
}

static void load_driver(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    printf("gpu: skipped: %s\n", dlerror());
    exit(0);
  }
  cu.init = sym(lib, "cuInit");
  cu.retain = sym(lib, "cuDevicePrimaryCtxRetain");
  cu.set_current = sym(lib, "cuCtxSetCurrent");
  cu.alloc = sym(lib, "cuMemAlloc_v2");
  cu.free_ = sym(lib, "cuMemFree_v2");
  cu.htod = sym(lib, "cuMemcpyHtoD_v2");
  cu.dtoh = sym(lib, "cuMemcpyDtoH_v2");
  cu.stream_create = sym(lib, "cuStreamCreate");
  cu.stream_sync = sym(lib, "cuStreamSynchronize");
  cu.stream_destroy = sym(lib, "cuStreamDestroy_v2");
  cu.begin_capture = sym(lib, "cuStreamBeginCapture_v2");
  cu.end_capture = sym(lib, "cuStreamEndCapture");
  cu.instantiate = sym(lib, "cuGraphInstantiateWithFlags");
  cu.graph_launch = sym(lib, "cuGraphLaunch");
  cu.ctx_sync = sym(lib, "cuCtxSynchronize");
  CU(cu.init(0));
  CUhandle ctx;
  CU(cu.retain(&ctx, 0));
  CU(cu.set_current(ctx));
}

static TVMFFIObjectHandle global(const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&n, &f) != 0 || !f) {
    fprintf(stderr, "no global %s\n", name);
    exit(1);
  }
  return f;
}

/* The error left raised, as one line (freed). */
static void print_raised(const char* what) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (!err) {
    printf("%s: failed with nothing raised\n", what);
    return;
  }
  const TVMFFIErrorCell* cell =
      (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  printf("%s: %.*s: %.*s\n", what, (int)cell->kind.size, cell->kind.data,
         (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(err);
}

static TVMFFIObjectHandle load(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.so", dir, name);
  TVMFFIAny arg = {0}, out = {0};
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = path;
  if (TVMFFIFunctionCall(global("ffi.ModuleLoadFromFile"), &arg, 1, &out) != 0) {
    print_raised(name);
    return NULL;
  }
  return out.v_obj;
}

static TVMFFIObjectHandle get_function(TVMFFIObjectHandle mod, const char* name) {
  TVMFFIAny args[3] = {{0}}, out = {0};
  args[0].type_index = kTVMFFIModule;
  args[0].v_obj = mod;
  args[1].type_index = kTVMFFIRawStr;
  args[1].v_c_str = name;
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = 1;
  if (TVMFFIFunctionCall(global("ffi.ModuleGetFunction"), args, 3, &out) != 0) {
    print_raised(name);
    return NULL;
  }
  return out.type_index == kTVMFFINone ? NULL : out.v_obj;
}

/* A float32 CUDA tensor over `ptr` (the caller keeps the memory). */
static TVMFFIObjectHandle cuda_tensor(uint64_t ptr, int64_t n) {
  DLManagedTensorVersioned* m = calloc(1, sizeof(*m));
  int64_t* s = malloc(sizeof(int64_t));
  *s = n;
  m->version.major = 1;
  m->dl_tensor.data = (void*)(uintptr_t)ptr;
  m->dl_tensor.device.device_type = kDLCUDA;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = s;
  TVMFFIObjectHandle t = NULL;
  if (TVMFFITensorFromDLPackVersioned(m, 0, 0, &t) != 0) print_raised("tensor");
  return t;
}

/* Calls `f(args...)`; 0 on success (an error is printed). */
static int call(TVMFFIObjectHandle f, TVMFFIAny* args, int n, const char* what) {
  TVMFFIAny out = {0};
  if (TVMFFIFunctionCall(f, args, n, &out) != 0) {
    print_raised(what);
    return -1;
  }
  if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
  return 0;
}

static TVMFFIAny obj(TVMFFIObjectHandle h) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFITensor;
  a.v_obj = h;
  return a;
}
static TVMFFIAny int_arg(int64_t v) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}
static TVMFFIAny ptr_arg(uint64_t p) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIOpaquePtr;
  a.v_ptr = (void*)(uintptr_t)p;
  return a;
}

/* Runs the host function `fn` of library `lib` on device copies of `a`;
 * whether the result is `want(a)`. */
typedef float (*Want)(const float* a, int i, int n);
static float add_one(const float* a, int i, int n) { (void)n; return a[i] + 1.0f; }
static float scale_n(const float* a, int i, int n) { (void)n; return a[i] * 3.0f; }
static float reverse(const float* a, int i, int n) { return a[n - 1 - i]; }

static int host_call(TVMFFIObjectHandle fn, int with_n, CUhandle stream, Want want) {
  float a[N], b[N];
  for (int i = 0; i < N; ++i) a[i] = (float)i * 0.5f;
  uint64_t da, db;
  CU(cu.alloc(&da, sizeof(a)));
  CU(cu.alloc(&db, sizeof(b)));
  CU(cu.htod(da, a, sizeof(a)));
  TVMFFIObjectHandle ta = cuda_tensor(da, N), tb = cuda_tensor(db, N);
  TVMFFIAny args[3] = {obj(ta), obj(tb), int_arg(N)};
  int rc = call(fn, args, with_n ? 3 : 2, "host call");
  if (stream) CU(cu.stream_sync(stream));
  CU(cu.ctx_sync());
  CU(cu.dtoh(b, db, sizeof(b)));
  int ok = rc == 0;
  for (int i = 0; ok && i < N; ++i) ok = b[i] == want(a, i, N);
  TVMFFIObjectDecRef(ta);
  TVMFFIObjectDecRef(tb);
  cu.free_(da);
  cu.free_(db);
  return ok;
}

static const char* data_dir;

static void* thread_main(void* arg) {
  int* ok = arg;
  CUhandle ctx;
  CU(cu.retain(&ctx, 0));
  CU(cu.set_current(ctx));
  CUhandle s;
  CU(cu.stream_create(&s, 1));
  void* old = NULL;
  TVMFFIEnvSetStream(kDLCUDA, 0, s, &old);
  TVMFFIObjectHandle m = load(data_dir, "cuda_cubin");
  TVMFFIObjectHandle f = m ? get_function(m, "add_one") : NULL;
  *ok = f != NULL;
  for (int i = 0; *ok && i < 50; ++i) *ok = host_call(f, 0, s, add_one);
  TVMFFIEnvSetStream(kDLCUDA, 0, old, NULL);
  cu.stream_destroy(s);
  if (f) TVMFFIObjectDecRef(f);
  if (m) TVMFFIObjectDecRef(m);
  return NULL;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* ns per launch of `kernel` (3 arguments, grid, block), best of 5. */
static double launch_ns(TVMFFIObjectHandle kernel) {
  uint64_t da, db;
  CU(cu.alloc(&da, N * 4));
  CU(cu.alloc(&db, N * 4));
  TVMFFIAny args[5] = {ptr_arg(da), ptr_arg(db), int_arg(N), int_arg(16), int_arg(64)};
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    double t0 = now_ns();
    for (int i = 0; i < 20000; ++i) call(kernel, args, 5, "launch");
    double t = (now_ns() - t0) / 20000;
    if (t < best) best = t;
    CU(cu.ctx_sync());
  }
  cu.free_(da);
  cu.free_(db);
  return best;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gpu_check DATA_DIR\n");
    return 2;
  }
  data_dir = argv[1];
  load_driver();
  struct {
    const char* lib;
    const char* fn;
    int with_n;
    Want want;
  } cases[] = {
      {"cuda_cubin", "add_one", 0, add_one},   {"cuda_cubin", "scale_n", 1, scale_n},
      {"cuda_fatbin", "add_one", 0, add_one},  {"cuda_ptx", "add_one", 0, add_one},
      {"cuda_ptx", "scale_n", 1, scale_n},     {"cuda_dyn_shared", "shared_reverse", 1, reverse},
      {"cuda_source", "add_one", 0, add_one},
  };
  char what[256];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    TVMFFIObjectHandle m = load(data_dir, cases[i].lib);
    TVMFFIObjectHandle f = m ? get_function(m, cases[i].fn) : NULL;
    snprintf(what, sizeof(what), "%s %s on the default stream", cases[i].lib, cases[i].fn);
    if (!f) {
      check(0, what);
      continue;
    }
    /* scale_n and shared_reverse also take the length. */
    check(host_call(f, cases[i].with_n, NULL, cases[i].want), what);
    TVMFFIObjectDecRef(f);
    TVMFFIObjectDecRef(m);
  }
  /* nvptx: TVM 0.27 declares the kernels .func: refused before the driver. */
  TVMFFIObjectHandle m = load(data_dir, "cuda_nvptx");
  TVMFFIObjectHandle f = get_function(m, "add_one_kernel");
  TVMFFIAny kargs[4] = {ptr_arg(0), ptr_arg(0), int_arg(8), int_arg(128)};
  TVMFFIAny out = {0};
  check(TVMFFIFunctionCall(f, kargs, 4, &out) != 0, "cuda_nvptx: a .func is refused");
  print_raised("cuda_nvptx");
  TVMFFIObjectDecRef(f);
  TVMFFIObjectDecRef(m);

  /* A side stream, then 8 threads with their own streams. */
  CUhandle s;
  CU(cu.stream_create(&s, 1));
  void* old = NULL;
  TVMFFIEnvSetStream(kDLCUDA, 0, s, &old);
  m = load(data_dir, "cuda_cubin");
  f = get_function(m, "add_one");
  check(host_call(f, 0, s, add_one), "cuda_cubin add_one on a side stream");
  /* CUDA-graph capture of the host call, replayed three times. */
  CU(cu.begin_capture(s, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */));
  float a[N], b[N];
  for (int i = 0; i < N; ++i) a[i] = (float)i;
  uint64_t da, db;
  CU(cu.alloc(&da, sizeof(a)));
  CU(cu.alloc(&db, sizeof(b)));
  TVMFFIObjectHandle ta = cuda_tensor(da, N), tb = cuda_tensor(db, N);
  TVMFFIAny args[2] = {obj(ta), obj(tb)};
  int rc = call(f, args, 2, "captured call");
  CUhandle graph = NULL, exec = NULL;
  CU(cu.end_capture(s, &graph));
  CU(cu.htod(da, a, sizeof(a)));
  int ok = rc == 0 && graph && cu.instantiate(&exec, graph, 0) == 0;
  for (int r = 0; ok && r < 3; ++r) ok = cu.graph_launch(exec, s) == 0;
  CU(cu.stream_sync(s));
  CU(cu.dtoh(b, db, sizeof(b)));
  for (int i = 0; ok && i < N; ++i) ok = b[i] == a[i] + 1.0f;
  check(ok, "cuda_cubin add_one captured in a CUDA graph, replayed 3 times");
  TVMFFIObjectDecRef(ta);
  TVMFFIObjectDecRef(tb);
  TVMFFIEnvSetStream(kDLCUDA, 0, old, NULL);
  TVMFFIObjectDecRef(f);

  pthread_t threads[8];
  int oks[8];
  for (int i = 0; i < 8; ++i) pthread_create(&threads[i], NULL, thread_main, &oks[i]);
  int all = 1;
  for (int i = 0; i < 8; ++i) {
    pthread_join(threads[i], NULL);
    all &= oks[i];
  }
  check(all, "8 threads, each its own stream, 50 host calls each");

  /* Launch overhead of a 3-argument kernel. */
  TVMFFIObjectHandle kernel = get_function(m, "scale_n_kernel");
  double ours = launch_ns(kernel);
  printf("launch: ours %.0f ns per 3-argument kernel launch\n", ours);
  TVMFFIObjectDecRef(kernel);
  TVMFFIObjectDecRef(m);
  const char* tvm = getenv("TVM_RUNTIME_CUDA");
  if (tvm && *tvm) {
    /* TVM's runtime registers its own `cuda` loader: the same library,
     * loaded again, gets TVM's module. */
    if (!dlopen(tvm, RTLD_NOW | RTLD_GLOBAL)) {
      printf("launch: TVM's runtime not loaded: %s\n", dlerror());
    } else {
      m = load(data_dir, "cuda_cubin");
      kernel = get_function(m, "scale_n_kernel");
      double theirs = launch_ns(kernel);
      printf("launch: TVM's libtvm_runtime_cuda.so %.0f ns; ours / TVM's = %.2f\n", theirs,
             ours / theirs);
    }
  }
  printf("gpu: %d checks, %d wrong\n", checks, wrong);
  return wrong != 0;
}
