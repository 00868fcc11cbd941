/* A fake CUDA driver (libcuda.so.1) for tests on machines without a GPU.
 *
 * "Device" memory is host memory. Modules are the images handed to
 * cuModuleLoadData (their format is recorded); kernels of the TVM test
 * libraries (tests/data/tvm) are emulated on the host, so a launch through
 * the runtime computes what the GPU would:
 *   add_one_kernel(float* a, float* b)            b[i] = a[i] + 1
 *   scale_n_kernel(float* a, float* b, int n)     b[i] = a[i] * 3, i < n
 *   shared_reverse_kernel(float* a, float* b, int n)  b[i] = a[n-1-i]
 * Every call is appended to the file named by FAKE_CUDA_LOG, one line each,
 * with the launch configuration and attributes. FAKE_CUDA_ARCH sets the
 * compute capability (default 90); FAKE_CUDA_NOEMULATE makes a launch do
 * nothing (benches/tvm_libraries.py). With FAKE_CUDA_DIFF set, what defines
 * a launch is logged too, for comparing two runtimes' calls
 * (tests/python/tvm_runtime_diff.py): each image loaded (its format, size
 * and FNV-1a digest) and each launch's parameter bytes, a device pointer as
 * the allocation it points into (`A<n>+<offset>`, allocations numbered in
 * the order made). fake_cudart.c builds TVM's CUDA runtime library on this
 * one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef struct { char name[128]; } Func;
typedef struct { unsigned id; unsigned pad; unsigned value[16]; } Attr;
typedef struct {
  unsigned grid[3], block[3], shared;
  void* stream;
  Attr* attrs;
  unsigned num_attrs;
} Config;

static __thread int current_device = -1;
static __thread int ctx_stack[16];
static __thread int ctx_depth = 0;

#include <stdarg.h>

/* Appends one line to FAKE_CUDA_LOG (fake_cudart.c logs here too). */
void fake_cuda_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void fake_cuda_log(const char* fmt, ...) {
  const char* path = getenv("FAKE_CUDA_LOG");
  if (!path) return;
  FILE* f = fopen(path, "a");
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static int diff_log(void) {
  static int on = -1;
  if (on < 0) on = getenv("FAKE_CUDA_DIFF") != NULL;
  return on;
}

/* Live allocations, numbered in the order made. */
typedef struct { uintptr_t base; size_t size; int serial; } Alloc;
static Alloc allocs[4096];
static int num_allocs = 0, next_serial = 0;
static void track(void* p, size_t n) {
  if (p && num_allocs < 4096) allocs[num_allocs++] = (Alloc){(uintptr_t)p, n, next_serial++};
}
static void untrack(void* p) {
  for (int i = 0; i < num_allocs; ++i)
    if (allocs[i].base == (uintptr_t)p) { allocs[i] = allocs[--num_allocs]; return; }
}
/* A parameter's bytes: a value inside a live allocation as that
 * allocation, anything else in hex (little-endian, as the bytes lie). */
static void describe(char* out, size_t cap, const void* param, unsigned size) {
  if (size == 8) {
    uintptr_t v;
    memcpy(&v, param, 8);
    for (int i = 0; i < num_allocs; ++i)
      if (v >= allocs[i].base && v < allocs[i].base + (allocs[i].size ? allocs[i].size : 1)) {
        snprintf(out, cap, "A%d+%zu", allocs[i].serial, (size_t)(v - allocs[i].base));
        return;
      }
  }
  size_t k = 0;
  for (unsigned i = 0; i < size && k + 3 < cap; ++i) k += (size_t)snprintf(out + k, cap - k, "%02x", ((const unsigned char*)param)[i]);
}

CUresult cuInit(unsigned flags) { (void)flags; fake_cuda_log("cuInit"); return 0; }
/* An H100's answers (compute capability FAKE_CUDA_ARCH, default 90). */
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  (void)dev;
  const char* a = getenv("FAKE_CUDA_ARCH");
  int arch = a ? atoi(a) : 90;
  switch (attr) {
    case 75: *v = arch / 10; break;               /* compute capability major */
    case 76: *v = arch % 10; break;               /* minor */
    case 1: *v = 1024; break;                     /* max threads per block */
    case 8: *v = 48 * 1024; break;                /* max shared memory per block */
    case 10: *v = 32; break;                      /* warp size */
    case 16: *v = 132; break;                     /* multiprocessors */
    case 81: *v = 228 * 1024; break;              /* max shared memory per multiprocessor */
    case 97: *v = 227 * 1024; break;              /* max shared memory per block, opt-in */
    default: *v = 0; break;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  if (dev < 0 || dev > 3) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *ctx = (void*)(intptr_t)(0x1000 + dev);
  return 0;
}
CUresult cuCtxGetCurrent(void** ctx) {
  *ctx = current_device < 0 ? NULL : (void*)(intptr_t)(0x1000 + current_device);
  return 0;
}
CUresult cuCtxSetCurrent(void* ctx) {
  current_device = (int)((intptr_t)ctx - 0x1000);
  fake_cuda_log("cuCtxSetCurrent device %d", current_device);
  return 0;
}
CUresult cuCtxGetDevice(int* dev) { *dev = current_device; return 0; }
CUresult cuCtxPushCurrent_v2(void* ctx) {
  ctx_stack[ctx_depth++] = current_device;
  current_device = (int)((intptr_t)ctx - 0x1000);
  return 0;
}
CUresult cuCtxPopCurrent_v2(void** ctx) {
  if (ctx) *ctx = NULL;
  current_device = ctx_stack[--ctx_depth];
  return 0;
}
/* A loaded module: a copy of its image (the driver copies it too). */
typedef struct { unsigned char* image; size_t size; } Module;

static size_t image_size(const unsigned char* p, const char* kind) {
  if (strcmp(kind, "cubin") == 0) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&shentsize, p + 0x3a, 2);
    memcpy(&shnum, p + 0x3c, 2);
    return (size_t)shoff + (size_t)shentsize * shnum;
  }
  if (strcmp(kind, "fatbin") == 0) {
    uint16_t header;
    uint64_t body;
    memcpy(&header, p + 6, 2);
    memcpy(&body, p + 8, 8);
    return header + (size_t)body;
  }
  return strlen((const char*)p);
}

CUresult cuModuleLoadData(void** module, const void* image) {
  const unsigned char* p = image;
  const char* kind = "unknown";
  if (memcmp(p, "\177ELF", 4) == 0) kind = "cubin";
  else if (p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba) kind = "fatbin";
  else if (strstr((const char*)p, ".version")) kind = "ptx";
  fake_cuda_log("cuModuleLoadData device %d %s", current_device, kind);
  if (strcmp(kind, "unknown") == 0) return 200; /* CUDA_ERROR_INVALID_IMAGE */
  size_t size = image_size(p, kind);
  if (diff_log()) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    fake_cuda_log("  image %s %zu bytes fnv1a %016llx", kind, size, (unsigned long long)h);
  }
  Module* m = malloc(sizeof(Module));
  m->image = malloc(size + 1);
  memcpy(m->image, p, size);
  m->image[size] = 0;
  m->size = size;
  *module = m;
  return 0;
}
CUresult cuModuleUnload(void* module) {
  fake_cuda_log("cuModuleUnload device %d", current_device);
  free(((Module*)module)->image);
  free(module);
  return 0;
}
/* Kernels live as long as the process, as a driver keeps them (held here
 * so that valgrind sees them reachable). */
Func* fake_cuda_kept[4096];
int fake_cuda_num_kept = 0;

/* The emulated kernels, and any other whose name the image holds as a
 * NUL-terminated symbol (a cubin's string table: Triton's kernels). */
CUresult cuModuleGetFunction(void** f, void* module, const char* name) {
  const Module* m = module;
  int known = !strcmp(name, "add_one_kernel") || !strcmp(name, "scale_n_kernel") ||
              !strcmp(name, "shared_reverse_kernel");
  size_t n = strlen(name);
  for (size_t i = 0; !known && n && i + n < m->size; ++i)
    known = (i == 0 || m->image[i - 1] == 0) && memcmp(m->image + i, name, n + 1) == 0;
  if (!known) return 500; /* CUDA_ERROR_NOT_FOUND */
  Func* fn = calloc(1, sizeof(Func));
  snprintf(fn->name, sizeof(fn->name), "%s", name);
  if (fake_cuda_num_kept < 4096) fake_cuda_kept[fake_cuda_num_kept++] = fn;
  *f = fn;
  fake_cuda_log("cuModuleGetFunction %s", name);
  return 0;
}
CUresult cuFuncSetAttribute(void* f, int attr, int value) {
  fake_cuda_log("cuFuncSetAttribute %s %d %d", ((Func*)f)->name, attr, value);
  return 0;
}
/* Stream capture: launches on the capturing stream are recorded (their
 * first three 8-byte argument holders copied) and replayed by cuGraphLaunch. */
typedef struct {
  Config config;
  Func* fn;
  uint64_t args[3];
} Recorded;
static void* capturing = NULL;
static Recorded recorded[16];
static int num_recorded = 0;
static CUresult run(const Config* c, Func* fn, void** args, const char* api);

CUresult cuLaunchKernelEx(const Config* c, void* f, void** args, void** extra) {
  (void)extra;
  static int noemulate = -1;
  if (noemulate < 0) noemulate = getenv("FAKE_CUDA_NOEMULATE") != NULL;
  if (noemulate) return 0; /* benchmarks: the launch path up to the driver */
  if (capturing && c->stream == capturing && num_recorded < 16) {
    Recorded* r = &recorded[num_recorded++];
    r->config = *c;
    r->config.attrs = NULL;
    r->config.num_attrs = 0;
    r->fn = f;
    int nargs = strcmp(((Func*)f)->name, "add_one_kernel") == 0 ? 2 : 3;
    for (int i = 0; i < nargs; ++i) memcpy(&r->args[i], args[i], i < 2 ? 8 : 4);
    fake_cuda_log("captured %s", ((Func*)f)->name);
    return 0;
  }
  return run(c, f, args, "cuLaunchKernelEx");
}

/* The launch without attributes (Triton's launchers up to 3.3), logged as
 * cuLaunchKernelEx's with its own name. */
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void* stream, void** args, void** extra) {
  (void)extra;
  if (getenv("FAKE_CUDA_NOEMULATE")) return 0;
  Config c = {{gx, gy, gz}, {bx, by, bz}, shared, stream, NULL, 0};
  return run(&c, f, args, "cuLaunchKernel");
}

static CUresult run(const Config* c, Func* fn, void** args, const char* api) {
  char attrs[256] = "";
  for (unsigned i = 0; i < c->num_attrs; ++i) {
    char one[64];
    /* The words the driver reads: three for a cluster's shape (4, 11),
     * one for the rest (the others are not set by every launcher). */
    const Attr* at = &c->attrs[i];
    if (at->id == 4 || at->id == 11)
      snprintf(one, sizeof(one), " attr%u=%u,%u,%u", at->id, at->value[0], at->value[1], at->value[2]);
    else
      snprintf(one, sizeof(one), " attr%u=%u", at->id, at->value[0]);
    strncat(attrs, one, sizeof(attrs) - strlen(attrs) - 1);
  }
  fake_cuda_log("%s %s device %d grid %u,%u,%u block %u,%u,%u shared %u stream %p%s", api,
        fn->name, current_device, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
        c->block[2], c->shared, c->stream, attrs);
  if (diff_log()) {
    /* The parameters' sizes: FAKE_CUDA_PARAMS ("name:8,8,4;other:8")
     * for the kernel, else the test kernels': two pointers, then an int32
     * but for add_one_kernel. */
    unsigned sizes[64] = {8, 8, 4};
    int n = strcmp(fn->name, "add_one_kernel") == 0 ? 2 : 3;
    const char* spec = getenv("FAKE_CUDA_PARAMS");
    size_t len = strlen(fn->name);
    for (const char* at = spec; at && *at; at = strchr(at, ';') ? strchr(at, ';') + 1 : "") {
      if (strncmp(at, fn->name, len) == 0 && at[len] == ':') {
        n = 0;
        for (const char* q = at + len + 1; *q && *q != ';' && n < 64;) {
          sizes[n++] = (unsigned)strtoul(q, (char**)&q, 10);
          if (*q == ',') ++q;
        }
        break;
      }
    }
    char line[2048] = "  params", one[600];
    for (int i = 0; i < n; ++i) {
      describe(one, sizeof(one), args[i], sizes[i]);
      strncat(line, " ", sizeof(line) - strlen(line) - 1);
      strncat(line, one, sizeof(line) - strlen(line) - 1);
    }
    fake_cuda_log("%s", line);
  }
  int emulated = !strcmp(fn->name, "add_one_kernel") || !strcmp(fn->name, "scale_n_kernel") ||
                 !strcmp(fn->name, "shared_reverse_kernel");
  if (!emulated) return 0;
  float* a = *(float**)args[0];
  float* b = *(float**)args[1];
  long threads = (long)c->grid[0] * c->grid[1] * c->grid[2] * c->block[0] * c->block[1] * c->block[2];
  if (strcmp(fn->name, "add_one_kernel") == 0) {
    for (long i = 0; i < threads; ++i) b[i] = a[i] + 1.0f;
  } else if (strcmp(fn->name, "scale_n_kernel") == 0) {
    int n = *(int*)args[2];
    for (long i = 0; i < threads && i < n; ++i) b[i] = a[i] * 3.0f;
  } else {
    int n = *(int*)args[2];
    for (long i = 0; i < n; ++i) b[i] = a[n - 1 - i];
  }
  return 0;
}
CUresult cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t n) {
  memcpy((void*)(uintptr_t)dst, src, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t n) {
  memcpy(dst, (const void*)(uintptr_t)src, n);
  return 0;
}
CUresult cuStreamCreate(void** s, unsigned flags) {
  (void)flags;
  *s = malloc(1);
  return 0;
}
CUresult cuStreamSynchronize(void* s) { (void)s; return 0; }
CUresult cuStreamDestroy_v2(void* s) { free(s); return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuStreamBeginCapture_v2(void* s, int mode) {
  (void)mode;
  capturing = s;
  num_recorded = 0;
  return 0;
}
CUresult cuStreamEndCapture(void* s, void** graph) {
  (void)s;
  capturing = NULL;
  *graph = recorded;
  return 0;
}
CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  (void)flags;
  *exec = graph;
  return 0;
}
CUresult cuGraphLaunch(void* exec, void* stream) {
  (void)exec; (void)stream;
  for (int i = 0; i < num_recorded; ++i) {
    void* args[3] = {&recorded[i].args[0], &recorded[i].args[1], &recorded[i].args[2]};
    run(&recorded[i].config, recorded[i].fn, args, "cuLaunchKernelEx");
  }
  return 0;
}
CUresult cuGetErrorName(CUresult e, const char** s) {
  switch (e) {
    case 101: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
    case 200: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
    case 500: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case 801: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; break;
  }
  return 0;
}
CUresult cuMemAlloc_v2(uint64_t* p, size_t n) {
  *p = (uint64_t)(uintptr_t)malloc(n);
  track((void*)(uintptr_t)*p, n);
  fake_cuda_log("cuMemAlloc device %d %zu", current_device, n);
  return 0;
}
CUresult cuMemFree_v2(uint64_t p) {
  untrack((void*)(uintptr_t)p);
  free((void*)(uintptr_t)p);
  fake_cuda_log("cuMemFree (synchronises the device)");
  return 0;
}
/* Stream-ordered allocation; FAKE_CUDA_NO_POOLS answers as a device
 * without memory pools does. */
CUresult cuMemAllocAsync(uint64_t* p, size_t n, void* stream) {
  if (getenv("FAKE_CUDA_NO_POOLS")) return 801; /* CUDA_ERROR_NOT_SUPPORTED */
  *p = (uint64_t)(uintptr_t)malloc(n);
  track((void*)(uintptr_t)*p, n);
  fake_cuda_log("cuMemAllocAsync device %d %zu stream %p", current_device, n, stream);
  return 0;
}
CUresult cuMemFreeAsync(uint64_t p, void* stream) {
  untrack((void*)(uintptr_t)p);
  free((void*)(uintptr_t)p);
  fake_cuda_log("cuMemFreeAsync stream %p", stream);
  return 0;
}
CUresult cuMemAllocHost_v2(void** p, size_t n) {
  *p = malloc(n);
  track(*p, n);
  fake_cuda_log("cuMemAllocHost %zu", n);
  return 0;
}
CUresult cuMemFreeHost(void* p) {
  untrack(p);
  free(p);
  fake_cuda_log("cuMemFreeHost");
  return 0;
}
/* What Triton's launcher (its cuda_utils) imports besides. */
CUresult cuFuncGetAttribute(int* v, int attr, void* f) {
  (void)f;
  *v = attr == 0 ? 1024 : 0; /* max threads per block; no registers, spills or static shared */
  return 0;
}
CUresult cuFuncSetCacheConfig(void* f, int config) {
  fake_cuda_log("cuFuncSetCacheConfig %s %d", ((Func*)f)->name, config);
  return 0;
}
CUresult cuPointerGetAttribute(void* data, int attr, uint64_t ptr) {
  if (attr != 3) return 1; /* CU_POINTER_ATTRIBUTE_DEVICE_POINTER only */
  *(uint64_t*)data = ptr;
  return 0;
}
CUresult cuStreamIsCapturing(void* s, int* status) {
  *status = capturing && s == capturing;
  return 0;
}
CUresult cuCtxGetLimit(size_t* v, int limit) { (void)limit; *v = 0; return 0; }
CUresult cuCtxSetLimit(int limit, size_t v) { (void)limit; (void)v; return 0; }

/* What TVM's CUDA runtime imports besides. */
CUresult cuGetErrorString(CUresult e, const char** s) { return cuGetErrorName(e, s); }
CUresult cuDeviceGetName(char* name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "Fake CUDA device");
  return 0;
}
CUresult cuTensorMapEncodeTiled(void) {
  fake_cuda_log("cuTensorMapEncodeTiled (unsupported)");
  return 801;
}
/* What other CUDA libraries look up when they find this driver (NVRTC
 * dlopens libcuda.so.1 too): answered without a device. */
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }
CUresult cuGetExportTable(const void** table, const void* id) {
  (void)id;
  *table = NULL;
  return 500;
}
CUresult cuGetProcAddress_v2(const char* name, void** fn, int version, uint64_t flags, int* status) {
  (void)name; (void)version; (void)flags;
  *fn = NULL;
  if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  return 500;
}
CUresult cuGetProcAddress(const char* name, void** fn, int version, uint64_t flags) {
  return cuGetProcAddress_v2(name, fn, version, flags, NULL);
}
