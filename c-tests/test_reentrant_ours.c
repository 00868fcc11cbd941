/* Re-entrant and late calls where the official library hangs, aborts or
 * crashes (each a row of docs/differences.md), and ours answers:
 * - TVMFFIHandleInitOnce of a handle whose init_func initialises another
 *   handle (the official library hangs: one lock for every handle), or the
 *   same handle again (it hangs; ours raises);
 * - an error raised and fetched in a pthread_key destructor at thread exit
 *   (the official library aborts), and one left raised there (released);
 * - a module loaded on one thread while a library's constructor loads one
 *   on another (no lock of ours is held across dlopen);
 * - what a library function's failure without an error leaves raised, and
 *   streams of device ids the official library crashes on.
 * A hang is a failure by ctest's timeout. */
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "common.h"

/* --- TVMFFIHandleInitOnce ------------------------------------------------ */

static void* handle_a = NULL;
static void* handle_b = NULL;
static int value_b;
static int value_a;

static int init_b(void** out) {
  *out = &value_b;
  return 0;
}

static int init_a_then_b(void** out) {
  int rc = TVMFFIHandleInitOnce(&handle_b, init_b);
  if (rc != 0) return rc;
  *out = &value_a;
  return 0;
}

static int init_a_then_a(void** out) {
  int rc = TVMFFIHandleInitOnce(&handle_a, init_b);
  if (rc != 0) return rc;
  *out = &value_a;
  return 0;
}

static void init_once(void) {
  CHECK_OK(TVMFFIHandleInitOnce(&handle_a, init_a_then_b));
  printf("init A, whose init initialises B: A set %d, B set %d\n", handle_a == &value_a,
         handle_b == &value_b);
  handle_a = NULL;
  EXPECT_RAISES("init A, whose init initialises A", TVMFFIHandleInitOnce(&handle_a, init_a_then_a));
  printf("  A still unset %d\n", handle_a == NULL);
}

/* --- thread exit --------------------------------------------------------- */

static pthread_key_t key;
static char seen_at_exit[256];

static void at_thread_exit(void* value) {
  if (value == (void*)1) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "raised at thread exit");
    char* text = take_error_kind();
    snprintf(seen_at_exit, sizeof(seen_at_exit), "%s", text ? text : "(nothing raised)");
    free(text);
  } else {
    /* Left raised: the library releases it after every destructor. */
    TVMFFIErrorSetRaisedFromCStr("ValueError", "left raised at thread exit");
  }
}

static void* thread_with_key(void* value) {
  /* This thread used the library before: its slot exists. */
  TVMFFIErrorSetRaisedFromCStr("TypeError", "earlier");
  free(take_error_kind());
  pthread_setspecific(key, value);
  return NULL;
}

static void thread_exit(void) {
  CHECK(pthread_key_create(&key, at_thread_exit) == 0);
  for (intptr_t v = 1; v <= 2; ++v) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_with_key, (void*)v) == 0);
    CHECK(pthread_join(t, NULL) == 0);
  }
  printf("fetched in a pthread_key destructor: %s\n", seen_at_exit);
  CHECK(strcmp(seen_at_exit, "ValueError: raised at thread exit") == 0);
}

/* --- loads from a constructor -------------------------------------------- */

static int sync_pipe[2];

static void* dlopen_ctor_loads(void* handle) {
  *(void**)handle = dlopen(PLUGIN_CTOR_LOADS, RTLD_NOW | RTLD_LOCAL);
  return NULL;
}

static void load_beside_a_constructor(void) {
  CHECK(pipe(sync_pipe) == 0);
  char fd[16];
  snprintf(fd, sizeof(fd), "%d", sync_pipe[1]);
  setenv("CTOR_SYNC_FD", fd, 1);
  setenv("CTOR_LOAD_PATH", PLUGIN_OUTLIVE, 1);
  void* handle = NULL;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, dlopen_ctor_loads, &handle) == 0);
  /* The constructor runs, holding the system loader's lock. */
  char byte;
  CHECK(read(sync_pipe[0], &byte, 1) == 1);
  TVMFFIAny path = any_c_str(PLUGIN_PLAIN);
  TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(handle != NULL);
  int* result = (int*)dlsym(handle, "ctor_load_result");
  printf("a load beside a constructor that loads: ours %d, the constructor's %d\n",
         mod.type_index == kTVMFFIModule, result ? *result : -100);
  CHECK(result != NULL && *result == 0);
  any_release(&mod);
  dlclose(handle);
}

/* --- answers where the official library crashes or leaves nothing -------- */

static void library_function_codes(void) {
  TVMFFIAny path = any_c_str(PLUGIN_CODES);
  TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  const char* names[] = {"answer_1", "answer_m2", "answer_int_min"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    TVMFFIAny f = module_function(mod, names[i], 0);
    TVMFFIAny out = any_none();
    EXPECT_RAISES(names[i], TVMFFIFunctionCall(f.v_obj, NULL, 0, &out));
    any_release(&f);
  }
  any_release(&mod);
}

static void streams(void) {
  /* Device type, id, and whether the stream is taken. */
  int32_t devices[][3] = {{-1, 0, 0}, {1, -1, 0}, {1, 1 << 20, 0}, {1 << 20, 0, 0},
                          {(1 << 20) - 1, (1 << 20) - 1, 1}};
  for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); ++i) {
    char label[64];
    snprintf(label, sizeof(label), "set stream (%d, %d)", devices[i][0], devices[i][1]);
    int rc = TVMFFIEnvSetStream(devices[i][0], devices[i][1], (void*)0x10, NULL);
    CHECK((rc == 0) == devices[i][2]);
    if (rc == 0) {
      printf("%s: rc 0, now %p\n", label, TVMFFIEnvGetStream(devices[i][0], devices[i][1]));
    } else {
      EXPECT_RAISES(label, rc);
    }
  }
}

int main(void) {
  init_once();
  thread_exit();
  load_beside_a_constructor();
  library_function_codes();
  streams();
  printf("reentrant-ours: done\n");
  return 0;
}
