/* A library as TVM's generated host code is: context slots the runtime
 * fills, reached from its functions (test_backend_ours):
 *   workspace(case): CPU workspaces: 0 allocates and frees; 1 frees a stack
 *     buffer, 2 a function's address, 3 the same workspace twice.
 *   parallel(n): n tasks (0: every thread) each add their id + 1 into a
 *     counter, meet at a barrier, and check every task's addition arrived;
 *     answers the sum. */
#include <tvm/ffi/c_api.h>

TVM_FFI_DLL_EXPORT void* __TVMBackendAllocWorkspace = 0;
TVM_FFI_DLL_EXPORT void* __TVMBackendFreeWorkspace = 0;
TVM_FFI_DLL_EXPORT void* __TVMBackendParallelLaunch = 0;
TVM_FFI_DLL_EXPORT void* __TVMBackendParallelBarrier = 0;

typedef void* (*Alloc)(int, int, uint64_t, int, int);
typedef int (*Free)(int, int, void*);
typedef struct { void* sync; int32_t num_task; } Env;
typedef int (*Lambda)(int, Env*, void*);
typedef int (*Launch)(Lambda, void*, int);
typedef int (*Barrier)(int, Env*);

TVM_FFI_DLL_EXPORT int __tvm_ffi_workspace(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)n;
  int c = (int)a[0].v_int64;
  Alloc alloc = (Alloc)__TVMBackendAllocWorkspace;
  Free free_ = (Free)__TVMBackendFreeWorkspace;
  char local[64];
  r->type_index = kTVMFFINone;
  void* p = c == 1 ? (void*)local : c == 2 ? (void*)&__tvm_ffi_workspace : alloc(1, 0, 1000, 2, 32);
  if (!p) return -1;
  if (c == 0) ((char*)p)[999] = 1;
  if (free_(1, 0, p) != 0) return -1;
  return c == 3 ? free_(1, 0, p) : 0;
}

typedef struct { int added; int seen_all; } Shared;

static int task(int id, Env* env, void* cdata) {
  Shared* shared = (Shared*)cdata;
  __atomic_fetch_add(&shared->added, id + 1, __ATOMIC_SEQ_CST);
  if (((Barrier)__TVMBackendParallelBarrier)(id, env) != 0) return -1;
  int want = env->num_task * (env->num_task + 1) / 2;
  if (__atomic_load_n(&shared->added, __ATOMIC_SEQ_CST) == want)
    __atomic_fetch_add(&shared->seen_all, 1, __ATOMIC_SEQ_CST);
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_parallel(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)n;
  Shared shared = {0, 0};
  if (((Launch)__TVMBackendParallelLaunch)(task, &shared, (int)a[0].v_int64) != 0) return -1;
  r->type_index = kTVMFFIInt;
  /* Every task saw every addition: the sum; else -1. */
  int tasks = 0;
  while (tasks * (tasks + 1) / 2 < shared.added) ++tasks;
  r->v_int64 = shared.seen_all == tasks ? shared.added : -1;
  return 0;
}
