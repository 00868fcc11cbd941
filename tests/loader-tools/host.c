/* A host that loads kernel libraries through `ffi.ModuleLoadFromFile`, as a
 * kernel DSL's runtime does, for the loader tool tests (run.sh): each mode
 * prints what a caller or a tool can observe, the same on both libraries.
 *   host run LIB [N]       load, print where dladdr puts its code and the
 *                          mapping /proc/self/maps shows, call spin(N)
 *   host bad LIB           call a function that reads freed memory
 *   host error FILE        print the error of loading a non-library
 *   host many DIR N        load DIR/k0.so .. k{N-1}.so, then open a file
 *   host daemon LIB1 LIB2  load LIB1, close every descriptor above 2, open
 *                          16 files, release LIB1 and load LIB2 (which
 *                          unloads released libraries): all stay open
 *   host links DIR N       load N hard links DIR/h{i}.so of one library:
 *                          how many images, and the in-memory copies made
 *   host reload LIB N      load, call and release LIB N times */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

static void die_raised(const char* where) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err) {
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
    printf("%s: %.*s: %.*s\n", where, (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
           cell->message.data);
  } else {
    printf("%s: failed without an error\n", where);
  }
  exit(1);
}

static TVMFFIAny str_arg(const char* s) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

static TVMFFIAny call_global(const char* name, TVMFFIAny* args, int n, int* rc) {
  TVMFFIObjectHandle f = NULL;
  TVMFFIByteArray key = {name, strlen(name)};
  if (TVMFFIFunctionGetGlobal(&key, &f) != 0 || !f) die_raised(name);
  TVMFFIAny out;
  memset(&out, 0, sizeof out);
  *rc = TVMFFIFunctionCall(f, args, n, &out);
  TVMFFIObjectDecRef(f);
  return out;
}

/* Loads `path`; exits with the error on failure. */
static TVMFFIAny load(const char* path) {
  TVMFFIAny arg = str_arg(path);
  int rc;
  TVMFFIAny m = call_global("ffi.ModuleLoadFromFile", &arg, 1, &rc);
  if (rc != 0) die_raised(path);
  return m;
}

static void release(TVMFFIAny m) {
  int rc;
  call_global("ffi.ModuleGlobalsRemove", &m, 1, &rc);
  if (rc != 0) die_raised("ffi.ModuleGlobalsRemove");
  TVMFFIObjectDecRef(m.v_obj);
}

/* Calls function `name` of module `m` with `args`. */
static TVMFFIAny call(TVMFFIAny m, const char* name, TVMFFIAny* args, int n) {
  TVMFFIAny a[3] = {m, str_arg(name), str_arg("")};
  a[2].type_index = kTVMFFIBool;
  a[2].v_int64 = 0;
  int rc;
  TVMFFIAny f = call_global("ffi.ModuleGetFunction", a, 3, &rc);
  if (rc != 0 || f.type_index < kTVMFFIStaticObjectBegin) die_raised(name);
  TVMFFIAny out;
  memset(&out, 0, sizeof out);
  if (TVMFFIFunctionCall(f.v_obj, args, n, &out) != 0) die_raised(name);
  TVMFFIObjectDecRef(f.v_obj);
  return out;
}

/* The text of a str result. */
static const char* text_of(const TVMFFIAny* s) {
  static char buf[4096];
  if (s->type_index == kTVMFFISmallStr) {
    snprintf(buf, sizeof buf, "%.*s", (int)s->small_str_len, s->v_bytes);
  } else {
    const TVMFFIByteArray* b = (const TVMFFIByteArray*)((const char*)s->v_obj + sizeof(TVMFFIObject));
    snprintf(buf, sizeof buf, "%.*s", (int)b->size, b->data);
  }
  return buf;
}

/* The path column of the first /proc/self/maps line naming a file called
 * `base`, or "(none)". */
static const char* mapped_as(const char* base) {
  static char found[4096];
  char line[8192];
  snprintf(found, sizeof found, "(none)");
  FILE* maps = fopen("/proc/self/maps", "r");
  while (maps && fgets(line, sizeof line, maps)) {
    char* path = strchr(line, '/');
    if (!path) continue;
    path[strcspn(path, "\n")] = 0;
    const char* slash = strrchr(path, '/');
    if (strstr(slash, base)) {
      snprintf(found, sizeof found, "%s", path);
      break;
    }
  }
  if (maps) fclose(maps);
  return found;
}

static long count_images(const char* dir_prefix, unsigned long inode) {
  /* Distinct start addresses of file mappings at offset 0 of `inode`. */
  char line[8192];
  long n = 0;
  FILE* maps = fopen("/proc/self/maps", "r");
  while (maps && fgets(line, sizeof line, maps)) {
    unsigned long ino = 0, off = 0;
    if (sscanf(line, "%*s %*s %lx %*s %lu", &off, &ino) == 2 && ino == inode && off == 0) ++n;
  }
  if (maps) fclose(maps);
  (void)dir_prefix;
  return n;
}

/* A field of /proc/meminfo, in KiB: Shmem counts memory files and tmpfs,
 * mapped or not (the copies a loader might make). */
static long meminfo_kib(const char* field) {
  char line[512];
  long v = -1;
  FILE* f = fopen("/proc/meminfo", "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, strlen(field))) v = atol(line + strlen(field) + 1);
  if (f) fclose(f);
  return v;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* mode = argv[1];
  if (!strcmp(mode, "run")) {
    TVMFFIAny m = load(argv[2]);
    TVMFFIAny where = call(m, "where", NULL, 0);
    printf("dladdr names: %s\n", text_of(&where));
    const char* base = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
    printf("maps names: %s\n", mapped_as(base));
    TVMFFIAny n = str_arg("");
    n.type_index = kTVMFFIInt;
    n.v_int64 = argc > 3 ? atol(argv[3]) : 1000;
    TVMFFIAny r = call(m, "spin", &n, 1);
    printf("spin: %s\n", r.type_index == kTVMFFIInt ? "int" : "?");
  } else if (!strcmp(mode, "bad")) {
    TVMFFIAny m = load(argv[2]);
    call(m, "bad", NULL, 0);
    printf("bad: called\n");
  } else if (!strcmp(mode, "error")) {
    TVMFFIAny arg = str_arg(argv[2]);
    int rc;
    call_global("ffi.ModuleLoadFromFile", &arg, 1, &rc);
    if (rc == 0) {
      printf("loaded?\n");
      return 1;
    }
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
    printf("error: %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
           cell->message.data);
    TVMFFIObjectDecRef(err);
  } else if (!strcmp(mode, "many")) {
    int n = atoi(argv[3]);
    for (int i = 0; i < n; ++i) {
      char path[4096];
      snprintf(path, sizeof path, "%s/k%d.so", argv[2], i);
      load(path);  /* kept */
    }
    int fd = open("/dev/null", O_RDONLY);
    printf("loaded %d libraries; then open: %s\n", n, fd >= 0 ? "ok" : strerror(errno));
  } else if (!strcmp(mode, "daemon")) {
    TVMFFIAny m = load(argv[2]);
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    int mine[16], open_after = 0;
    for (int i = 0; i < 16; ++i) mine[i] = open("/dev/null", O_RDONLY);
    release(m);
    release(load(argv[3]));
    for (int i = 0; i < 16; ++i) open_after += fcntl(mine[i], F_GETFD) >= 0;
    printf("own descriptors open after unloading: %d of 16\n", open_after);
  } else if (!strcmp(mode, "links")) {
    int n = atoi(argv[3]);
    long shmem0 = meminfo_kib("Shmem:");
    struct stat st;
    char path[4096];
    snprintf(path, sizeof path, "%s/h0.so", argv[2]);
    if (stat(path, &st) != 0) return 3;
    for (int i = 0; i < n; ++i) {
      snprintf(path, sizeof path, "%s/h%d.so", argv[2], i);
      load(path);
    }
    long shmem = meminfo_kib("Shmem:") - shmem0;
    printf("%d hard links: %ld image(s), in-memory copies %s\n", n, count_images(argv[2], st.st_ino),
           shmem < (64 << 10) ? "under 64 MiB" : "64 MiB or more");
    fprintf(stderr, "links: the system's Shmem grew by %ld KiB\n", shmem);
  } else if (!strcmp(mode, "reload")) {
    int n = atoi(argv[3]), ok = 0;
    for (int i = 0; i < n; ++i) {
      TVMFFIAny m = load(argv[2]);
      TVMFFIAny one = str_arg("");
      one.type_index = kTVMFFIInt;
      one.v_int64 = 1;
      call(m, "spin", &one, 1);
      release(m);
      ++ok;
    }
    printf("reloaded %d times\n", ok);
  } else {
    return 2;
  }
  return 0;
}
