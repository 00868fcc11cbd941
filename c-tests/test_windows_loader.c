/* How ours loads a library file on Windows (src/platform/loader/windows.rs),
 * each refusal of its checks a clean error naming what is wrong. Ours
 * only: the official DLL maps a file cut short until the loader faults. A
 * file the system cannot open gets the reference's message, which names no
 * reason. */
#include <windows.h>
#include "common.h"

static TVMFFIAny load(const char* file) {
  TVMFFIAny out = any_none(), arg = any_none();
  arg.type_index = kTVMFFIRawStr;
  arg.v_c_str = file;
  TVMFFIObjectHandle f = get_global("ffi.ModuleLoadFromFile");
  int rc = TVMFFIFunctionCall(f, &arg, 1, &out);
  TVMFFIObjectDecRef(f);
  if (rc != 0) {
    /* The message, with the run's directory (and the drive, as each
     * spelling gives it) left out. */
    char* text = take_error_kind();
    const char* name = strrchr(file, '\\') ? strrchr(file, '\\') + 1 : file;
    printf("%s: refused: ", name);
    for (const char* p = text; *p;) {
      const char* hit = strstr(p, "tvm-ffi-loader-");
      if (hit == NULL) {
        printf("%s", p);
        break;
      }
      const char* start = hit;
      while (start > p && start[-1] != ' ') --start;
      printf("%.*s<dir>", (int)(start - p), p);
      p = hit + strlen("tvm-ffi-loader-");
      while (*p >= '0' && *p <= '9') ++p;
    }
    printf("\n");
    free(text);
  }
  return out;
}

static void copy_bytes(const char* from, const char* to, long keep) {
  FILE* in = fopen(from, "rb");
  FILE* out = fopen(to, "wb");
  CHECK(in && out);
  char buf[65536];
  size_t n;
  long total = 0;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0 && (keep < 0 || total < keep)) {
    if (keep >= 0 && total + (long)n > keep) n = (size_t)(keep - total);
    CHECK(fwrite(buf, 1, n, out) == n);
    total += (long)n;
  }
  fclose(in);
  CHECK(fclose(out) == 0);
}

int main(void) {
  char dir[MAX_PATH], file[MAX_PATH], other[MAX_PATH];
  CHECK(GetTempPathA(sizeof dir, dir) > 0);
  /* A new directory each run: a mapped library cannot be deleted, so the
   * files stay in Wine's TEMP (under target/windows/prefix). */
  snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "tvm-ffi-loader-%lu%llu",
           GetCurrentProcessId(), (unsigned long long)GetTickCount64());
  CHECK(CreateDirectoryA(dir, NULL));
  snprintf(file, sizeof file, "%s\\plugin.dll", dir);
  snprintf(other, sizeof other, "%s\\away.dll", dir);

  /* Missing, a directory, a file cut short (its sections beyond its end). */
  CHECK(load("C:\\nonexistent\\plugin.dll").type_index == kTVMFFINone);
  CHECK(load(dir).type_index == kTVMFFINone);
  copy_bytes(PLUGIN_PLAIN, file, 1024);
  TVMFFIAny cut = load(file);
  CHECK(cut.type_index == kTVMFFINone);
  CHECK(DeleteFileA(file));

  /* Loaded, then renamed away and replaced while mapped: the system loader
   * answers the path with the old image, and so does ours, as the
   * reference. */
  copy_bytes(PLUGIN_PLAIN, file, -1);
  TVMFFIAny first = load(file);
  CHECK(first.type_index == kTVMFFIModule);
  printf("plugin.dll: loaded\n");
  CHECK(MoveFileA(file, other));
  copy_bytes(PLUGIN_WITH_BIN, file, -1);
  TVMFFIAny second = load(file);
  CHECK(second.type_index == kTVMFFIModule);
  printf("plugin.dll replaced while mapped: loaded (the old image)\n");
  any_release(&second);
  /* The same file again is the same image. */
  TVMFFIAny again = load(other);
  CHECK(again.type_index == kTVMFFIModule);
  printf("away.dll: loaded\n");
  any_release(&again);
  any_release(&first);
  return 0;
}
