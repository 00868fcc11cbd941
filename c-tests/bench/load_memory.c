/* Peak memory of loading a library: prints the process's peak resident set
 * (KiB) after ffi.ModuleLoadFromFile of argv[1] and its release
 * (`load_peak_rss_kib`), and how much the load added to it
 * (`load_rss_growth_kib`). */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <tvm/ffi/c_api.h>

static long peak_kib(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  TVMFFIByteArray name = {"ffi.ModuleLoadFromFile", strlen("ffi.ModuleLoadFromFile")};
  TVMFFIObjectHandle load = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &load) != 0 || load == NULL) return 1;
  TVMFFIAny path, mod;
  memset(&path, 0, sizeof(path));
  memset(&mod, 0, sizeof(mod));
  path.type_index = kTVMFFIRawStr;
  path.v_c_str = argv[1];
  long before = peak_kib();
  if (TVMFFIFunctionCall(load, &path, 1, &mod) != 0) return 1;
  TVMFFIObjectDecRef(mod.v_obj);
  long after = peak_kib();
  printf("load_peak_rss_kib %ld\nload_rss_growth_kib %ld\n", after, after - before);
  return 0;
}
