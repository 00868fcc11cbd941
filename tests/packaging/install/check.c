/* Built against an install of tvm-ffi-rs (pkg-config, CMake or the static
 * library): calls a global through the C API and says which libtvm_ffi
 * the process mapped (argv[1] is the expected file, or "static"). */
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  TVMFFIByteArray name = {"ffi.FunctionListGlobalNamesFunctor", 34};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &f) != 0 || f == NULL) {
    printf("no global ffi.FunctionListGlobalNamesFunctor\n");
    return 1;
  }
  TVMFFIObjectDecRef(f);
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096], mapped[4096] = "";
  while (maps && fgets(line, sizeof line, maps)) {
    char* path = strchr(line, '/');
    if (path && strstr(path, "libtvm_ffi")) {
      path[strcspn(path, "\n")] = 0;
      snprintf(mapped, sizeof mapped, "%s", path);
    }
  }
  if (maps) fclose(maps);
  int ok = strcmp(argv[1], "static") == 0 ? mapped[0] == 0 : strcmp(mapped, argv[1]) == 0;
  printf("called ffi.FunctionListGlobalNamesFunctor; libtvm_ffi mapped: %s\n", mapped[0] ? mapped : "none (static)");
  return ok ? 0 : 1;
}
