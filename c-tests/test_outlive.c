/* Objects outliving the library that made them: a closure whose safe_call
 * and deleter live in a loaded library, and an object whose deleter lives
 * there, are used and released after every module of that library is gone.
 * Ours only: the official library unmaps the library when its module is
 * released, and the process dies with SIGSEGV on the first call. Ours keeps
 * a loaded library mapped for the life of the process.
 *
 * Then releasing: `ffi.ModuleGlobalsRemove` says the caller is done with a
 * library; once nothing from it is left, the next load unloads it, unless a
 * global it registered still runs its code (then it stays mapped). */
#include "common.h"

/* How many images of the plugin are mapped: distinct inodes among the
 * mappings of /proc/self/maps that name it (the system loader maps one
 * image per file, so a second image needs a second file). */
#ifdef _WIN32
#include <windows.h>
#include <tlhelp32.h>
/* The images of the plugin (and its copy) the process has loaded. */
static int images_mapped(void) {
  HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, 0);
  if (snap == INVALID_HANDLE_VALUE) return -1;
  MODULEENTRY32 module;
  module.dwSize = sizeof module;
  int count = 0;
  for (BOOL more = Module32First(snap, &module); more; more = Module32Next(snap, &module)) {
    count += strstr(module.szExePath, "plugin_outlive") != NULL;
  }
  CloseHandle(snap);
  return count;
}
#else
static int images_mapped(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  unsigned long inodes[64];
  int count = 0;
  while (maps && fgets(line, sizeof line, maps)) {
    unsigned long inode = 0;
    if (!strstr(line, "plugin_outlive") || sscanf(line, "%*s %*s %*s %*s %lu", &inode) != 1) continue;
    int seen = 0;
    for (int i = 0; i < count; ++i) seen |= inodes[i] == inode;
    if (!seen && count < 64) inodes[count++] = inode;
  }
  if (maps) fclose(maps);
  return count;
}
#endif

static TVMFFIAny load_path(const char* file) {
  TVMFFIAny path = any_c_str(file);
  return call_global("ffi.ModuleLoadFromFile", &path, 1);
}

static TVMFFIAny load_plugin(void) { return load_path(PLUGIN_OUTLIVE); }

/* Copies the plugin to `to` (a new file: a second image when loaded). */
static void copy_plugin(const char* to) {
  FILE* in = fopen(PLUGIN_OUTLIVE, "rb");
  FILE* out = fopen(to, "wb");
  CHECK(in && out);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) CHECK(fwrite(buf, 1, n, out) == n);
  fclose(in);
  CHECK(fclose(out) == 0);
}

static void releasing(void) {
  int before = images_mapped();
  /* The library loaded above (the same unchanged file, so the same image)
   * registers a global, then is released: it stays mapped. */
  TVMFFIAny mod = load_plugin();
  TVMFFIAny reg = module_function(mod, "register_global", 0);
  TVMFFIAny r = any_none();
  CHECK_OK(TVMFFIFunctionCall(reg.v_obj, NULL, 0, &r));
  any_release(&reg);
  TVMFFIAny none = call_global("ffi.ModuleGlobalsRemove", &mod, 1);
  any_release(&mod);
  TVMFFIAny again = load_plugin(); /* the next load unloads what it may */
  TVMFFIAny answer = call_global("testing.outlive_answer", NULL, 0);
  printf("released with a global registered: answer %lld, images %d -> %d\n",
         (long long)answer.v_int64, before, images_mapped());
  CHECK(answer.v_int64 == 42 && images_mapped() == before);
  any_release(&again);
  /* A library nothing uses any more is released: it is unloaded. A copy of
   * the plugin is a second file, so a second image. */
  char copy[4096];
  snprintf(copy, sizeof copy, "%s.copy.so", PLUGIN_OUTLIVE);
  copy_plugin(copy);
  TVMFFIAny other = load_path(copy);
  int loaded = images_mapped();
  TVMFFIAny make_object = module_function(other, "make_object", 0);
  CHECK_OK(TVMFFIFunctionCall(make_object.v_obj, NULL, 0, &r));
  any_release(&r);
  any_release(&make_object);
  none = call_global("ffi.ModuleGlobalsRemove", &other, 1);
  any_release(&other);
  TVMFFIAny third = load_plugin();
  printf("a second file: images %d; released with nothing left: images %d\n", loaded,
         images_mapped());
  CHECK(none.type_index == kTVMFFINone && loaded == before + 1 && images_mapped() == before);
  any_release(&third);
  remove(copy);
}

int main(void) {
  TVMFFIAny closure = any_none(), obj = any_none();
  for (int round = 0; round < 2; ++round) {
    TVMFFIAny path = any_c_str(PLUGIN_OUTLIVE);
    TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
    TVMFFIAny make_closure = module_function(mod, "make_closure", 0);
    TVMFFIAny make_object = module_function(mod, "make_object", 0);
    CHECK(make_closure.type_index == kTVMFFIFunction && make_object.type_index == kTVMFFIFunction);
    TVMFFIAny x = any_int(41 + round);
    any_release(&closure);
    CHECK_OK(TVMFFIFunctionCall(make_closure.v_obj, &x, 1, &closure));
    any_release(&obj);
    CHECK_OK(TVMFFIFunctionCall(make_object.v_obj, NULL, 0, &obj));
    /* Every module and function taken from the library goes. */
    any_release(&make_closure);
    any_release(&make_object);
    any_release(&mod);
    TVMFFIAny r = any_none();
    CHECK_OK(TVMFFIFunctionCall(closure.v_obj, NULL, 0, &r));
    printf("round %d: closure() = %lld after its module was released\n", round, (long long)r.v_int64);
    CHECK(r.v_int64 == 41 + round);
  }
  /* The deleters run in the library's code, still mapped. */
  any_release(&closure);
  any_release(&obj);
  printf("closure and object released after their library's modules\n");
  releasing();
  return 0;
}
