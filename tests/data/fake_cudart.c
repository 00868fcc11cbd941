/* A fake CUDA runtime (libcudart.so.13) over the fake driver of
 * fake_cuda.c, for TVM's own CUDA runtime (libtvm_runtime_cuda.so) on a
 * machine without a GPU: the real runtime cannot start on a fake driver.
 * It has the functions TVM 0.27's runtime imports, under the symbol
 * version `libcudart.so.13` they are imported with (tests/data/fake_cudart.map).
 * Device selection and memory go to the driver (so its log and its table of
 * allocations see them); copies are memcpy (device memory is host memory);
 * streams and events are tokens; what TVM's runtime only uses for timing or
 * graphs answers cudaErrorNotSupported. Calls are logged as the driver's are
 * (FAKE_CUDA_LOG), prefixed `cudart`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cudaError_t;
typedef int CUresult;
enum { kSuccess = 0, kInvalidValue = 1, kInvalidDevice = 101, kNotSupported = 801 };

/* The fake driver's entry points. */
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev);
CUresult cuCtxSetCurrent(void* ctx);
CUresult cuCtxGetDevice(int* dev);
CUresult cuDeviceGetAttribute(int* v, int attr, int dev);
CUresult cuMemAlloc_v2(uint64_t* p, size_t n);
CUresult cuMemFree_v2(uint64_t p);
CUresult cuMemAllocHost_v2(void** p, size_t n);
CUresult cuMemFreeHost(void* p);
void fake_cuda_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

static __thread int last_error = 0;
static cudaError_t ret(cudaError_t e) {
  if (e) last_error = e;
  return e;
}

cudaError_t cudaSetDevice(int dev) {
  void* ctx;
  if (cuDevicePrimaryCtxRetain(&ctx, dev) != 0) return ret(kInvalidDevice);
  return ret(cuCtxSetCurrent(ctx));
}
cudaError_t cudaGetDevice(int* dev) {
  int d = -1;
  cuCtxGetDevice(&d);
  *dev = d < 0 ? 0 : d;
  return kSuccess;
}
cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return kSuccess; }
/* cudaDevAttrComputeCapabilityMajor/Minor (75/76) as the driver answers;
 * the others a plausible device's. */
cudaError_t cudaDeviceGetAttribute(int* v, int attr, int dev) {
  if (dev != 0) return ret(kInvalidDevice);
  switch (attr) {
    case 75: case 76: return ret(cuDeviceGetAttribute(v, attr, dev));
    case 1: *v = 1024; break;        /* max threads per block */
    case 8: *v = 48 * 1024; break;   /* max shared memory per block */
    case 10: *v = 32; break;         /* warp size */
    case 16: *v = 132; break;        /* multiprocessors */
    default: *v = 0; break;
  }
  return kSuccess;
}
cudaError_t cudaGetDeviceProperties(void* prop, int dev) {
  (void)prop; (void)dev;
  return ret(kNotSupported);
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  *free_bytes = (size_t)1 << 34;
  *total = (size_t)1 << 35;
  return kSuccess;
}
cudaError_t cudaMalloc(void** p, size_t n) {
  uint64_t d = 0;
  CUresult r = cuMemAlloc_v2(&d, n);
  *p = (void*)(uintptr_t)d;
  return ret(r);
}
cudaError_t cudaFree(void* p) { return ret(p ? cuMemFree_v2((uint64_t)(uintptr_t)p) : 0); }
cudaError_t cudaMallocHost(void** p, size_t n) { return ret(cuMemAllocHost_v2(p, n)); }
cudaError_t cudaFreeHost(void* p) { return ret(cuMemFreeHost(p)); }
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, void* stream) {
  (void)kind; (void)stream;
  memmove(dst, src, n);
  return kSuccess;
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dd, const void* src, int sd, size_t n, void* s) {
  (void)dd; (void)sd; (void)s;
  memmove(dst, src, n);
  return kSuccess;
}
cudaError_t cudaStreamCreate(void** s) {
  *s = malloc(1);
  fake_cuda_log("cudart cudaStreamCreate");
  return kSuccess;
}
cudaError_t cudaStreamCreateWithFlags(void** s, unsigned flags) {
  (void)flags;
  return cudaStreamCreate(s);
}
cudaError_t cudaStreamDestroy(void* s) { free(s); return kSuccess; }
cudaError_t cudaStreamSynchronize(void* s) {
  (void)s;
  fake_cuda_log("cudart cudaStreamSynchronize");
  return kSuccess;
}
cudaError_t cudaStreamWaitEvent(void* s, void* e, unsigned flags) {
  (void)s; (void)e; (void)flags;
  return kSuccess;
}
cudaError_t cudaEventCreate(void** e) { *e = malloc(1); return kSuccess; }
cudaError_t cudaEventDestroy(void* e) { free(e); return kSuccess; }
cudaError_t cudaEventRecord(void* e, void* s) { (void)e; (void)s; return kSuccess; }
cudaError_t cudaEventSynchronize(void* e) { (void)e; return kSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, void* a, void* b) {
  (void)a; (void)b;
  *ms = 0;
  return kSuccess;
}
#define UNSUPPORTED(name, ...)                      \
  cudaError_t name(__VA_ARGS__) {                   \
    fake_cuda_log("cudart " #name " (unsupported)"); \
    return ret(kNotSupported);                      \
  }
UNSUPPORTED(cudaStreamBeginCapture, void* s, int mode)
UNSUPPORTED(cudaStreamEndCapture, void* s, void** g)
UNSUPPORTED(cudaGraphInstantiate, void** e, void* g, unsigned long long flags)
UNSUPPORTED(cudaGraphLaunch, void* e, void* s)
UNSUPPORTED(cudaGraphDestroy, void* g)
UNSUPPORTED(cudaGraphExecDestroy, void* e)
cudaError_t cudaGetLastError(void) {
  cudaError_t e = last_error;
  last_error = 0;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }
const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case kSuccess: return "cudaSuccess";
    case kInvalidValue: return "cudaErrorInvalidValue";
    case kInvalidDevice: return "cudaErrorInvalidDevice";
    case kNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }
