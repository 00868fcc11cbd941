/* A C host running a Triton kernel with no Triton and no Python (ours only:
 * the official library has no Triton loader): the `add` kernel Triton 3.9
 * compiled (tests/data/triton/3.9/add) becomes artifacts, a set exported as
 * a library, loaded with ffi.ModuleLoadFromFile and launched on the fake
 * CUDA driver (tests/data/fake_cuda.c, built by CMake): its log shows
 * Triton's grid, block and parameter bytes. */
#include <dlfcn.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

int main(void) {
  /* The fake driver, loaded first by its path: the runtime's dlopen of
   * libcuda.so.1 then finds it by its soname (as under valgrind, without
   * ctest's environment). It reads its settings at each call. */
  setenv("FAKE_CUDA_LOG", FAKE_CUDA_LOG_PATH, 1);
  setenv("FAKE_CUDA_DIFF", "1", 1);
  setenv("FAKE_CUDA_PARAMS", "add:8,8,8,4,8,8", 1);
  unlink(FAKE_CUDA_LOG_PATH);
  void* cuda = dlopen(FAKE_CUDA_LIB, RTLD_NOW | RTLD_GLOBAL);
  CHECK(cuda != NULL);
  char dir[] = "/tmp/tvm-ffi-triton-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char lib[256];
  snprintf(lib, sizeof(lib), "%s/add_kernel.so", dir);
  /* The cache entry as artifacts, a set, a library. */
  TVMFFIAny args[2] = {any_c_str("triton_add"), any_c_str(TRITON_ADD_DIR)};
  TVMFFIAny parts = call_global("ffi.TritonCacheToArtifacts", args, 2);
  TVMFFIAny set_args[2] = {parts, any_none()};
  TVMFFIAny set = call_global("ffi.ArtifactSet", set_args, 2);
  TVMFFIAny export_args[2] = {set, any_c_str(lib)};
  TVMFFIAny none = call_global("ffi.ArtifactSetExportLibrary", export_args, 2);
  any_release(&none);
  any_release(&set);
  any_release(&parts);
  TVMFFIAny path = any_c_str(lib);
  TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  TVMFFIAny add = module_function(mod, "add", 1);
  CHECK(add.type_index == kTVMFFIFunction);
  /* Three device buffers from the (fake) driver. */
  int (*alloc)(uint64_t*, size_t) = (int (*)(uint64_t*, size_t))dlsym(cuda, "cuMemAlloc_v2");
  CHECK(alloc != NULL);
  uint64_t buf[3];
  for (int i = 0; i < 3; ++i) CHECK(alloc(&buf[i], 4096) == 0);
  /* add(grid 4, 1, 1; x, y, out, n = 1024). */
  TVMFFIAny launch[7] = {any_int(4), any_int(1), any_int(1), any_int((int64_t)buf[0]),
                         any_int((int64_t)buf[1]), any_int((int64_t)buf[2]), any_int(1024)};
  TVMFFIAny out = any_none();
  CHECK_OK(TVMFFIFunctionCall(add.v_obj, launch, 7, &out));
  /* A float for n: refused before the driver. */
  launch[6].type_index = kTVMFFIFloat;
  launch[6].v_float64 = 1.5;
  int rc = TVMFFIFunctionCall(add.v_obj, launch, 7, &out);
  char* error = take_error_kind();
  printf("a float for n: rc %d %s\n", rc, error ? error : "(nothing raised)");
  CHECK(rc != 0 && error && strstr(error, "parameter n (i32) must be an int"));
  free(error);
  any_release(&add);
  any_release(&mod);
  /* The launch the driver saw. */
  FILE* log = fopen(FAKE_CUDA_LOG_PATH, "r");
  CHECK(log != NULL);
  char line[512];
  int launched = 0, params = 0;
  while (fgets(line, sizeof(line), log)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, "cuLaunchKernelEx", 16) == 0) {
      printf("%s\n", line);
      launched += strcmp(line, "cuLaunchKernelEx add device 0 grid 4,1,1 block 128,1,1 shared 0 stream (nil)") == 0;
    }
    if (strncmp(line, "  params", 8) == 0) {
      printf("%s\n", line);
      params += strcmp(line, "  params A0+0 A1+0 A2+0 00040000 0000000000000000 0000000000000000") == 0;
    }
  }
  fclose(log);
  CHECK(launched == 1 && params == 1);
  unlink(lib);
  rmdir(dir);
  dlclose(cuda);
  return 0;
}
