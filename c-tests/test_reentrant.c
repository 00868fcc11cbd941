/* Foreign code that calls back into the library while the library is in
 * the middle of something: a replaced or removed global whose deleter looks
 * a global up, on this thread or on another one it waits for. Both
 * libraries return (a hang here is a failure: ctest's timeout). Also the
 * answers both give to valid calls that are easy to get wrong: a library
 * function answering a failure code without raising, and streams of device
 * types DLPack does not define. The transcript must match the official
 * library's. */
#include <pthread.h>

#include "common.h"

/* Looks up a built-in global and releases it: 1 when found. */
static int look_up_a_global(void) {
  TVMFFIByteArray name = byte_array("ffi.String");
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &f) != 0 || f == NULL) return 0;
  TVMFFIObjectDecRef(f);
  return 1;
}

static void* look_up_on_a_thread(void* found) {
  *(int*)found = look_up_a_global();
  return NULL;
}

/* How a deleter calls back: on its own thread (0) or on another thread it
 * waits for (1). */
static int deleter_found = -1;

static void deleter_on_this_thread(void* self) {
  (void)self;
  deleter_found = look_up_a_global();
}

static void deleter_waiting_for_a_thread(void* self) {
  (void)self;
  pthread_t t;
  int found = 0;
  CHECK(pthread_create(&t, NULL, look_up_on_a_thread, &found) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  deleter_found = found;
}

static int answer_zero(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  *result = any_int(0);
  return 0;
}

/* A function with a non-NULL self (so its deleter runs) and `deleter`. */
static TVMFFIObjectHandle function_with(void (*deleter)(void*)) {
  static int self;
  TVMFFIObjectHandle f = NULL;
  CHECK_OK(TVMFFIFunctionCreate(&self, answer_zero, deleter, &f));
  return f;
}

static void register_global(const char* name, TVMFFIObjectHandle f, int override) {
  TVMFFIByteArray n = byte_array(name);
  CHECK_OK(TVMFFIFunctionSetGlobal(&n, f, override));
  TVMFFIObjectDecRef(f);
}

static void replaced_and_removed(void) {
  void (*deleters[2])(void*) = {deleter_on_this_thread, deleter_waiting_for_a_thread};
  const char* how[2] = {"on its thread", "waiting for a thread"};
  for (int i = 0; i < 2; ++i) {
    deleter_found = -1;
    register_global("testing.reentrant", function_with(deleters[i]), 1);
    register_global("testing.reentrant", function_with(NULL), 1);
    printf("override: the replaced function's deleter (%s) found a global: %d\n", how[i],
           deleter_found);
    deleter_found = -1;
    register_global("testing.reentrant", function_with(deleters[i]), 1);
    TVMFFIAny name = any_c_str("testing.reentrant");
    TVMFFIAny removed = call_global("ffi.FunctionRemoveGlobal", &name, 1);
    printf("remove: answered type %d value %lld; the deleter (%s) found a global: %d\n",
           removed.type_index, (long long)removed.v_int64, how[i], deleter_found);
  }
}

static void library_function_codes(void) {
  TVMFFIAny path = any_c_str(PLUGIN_CODES);
  TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  const char* names[] = {"answer_1",  "answer_m1",      "answer_m2",
                         "answer_m3", "answer_int_min", "answer_int_max"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    TVMFFIAny f = module_function(mod, names[i], 0);
    TVMFFIAny out = any_none();
    int rc = TVMFFIFunctionCall(f.v_obj, NULL, 0, &out);
    /* What is left raised differs (see test_reentrant_ours.c): dropped. */
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) TVMFFIObjectDecRef(err);
    printf("%s: rc %d\n", names[i], rc);
    any_release(&f);
  }
  any_release(&mod);
}

static void streams(void) {
  int32_t devices[][2] = {{2, 3}, {100, 0}, {1 << 19, 1}, {-5, 0}};
  for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); ++i) {
    void* old = (void*)0x1;
    char label[64];
    snprintf(label, sizeof(label), "set stream (%d, %d)", devices[i][0], devices[i][1]);
    int rc = TVMFFIEnvSetStream(devices[i][0], devices[i][1], (void*)0x10, &old);
    if (rc == 0) {
      printf("%s: rc 0, old %p, now %p\n", label, old,
             TVMFFIEnvGetStream(devices[i][0], devices[i][1]));
    } else {
      EXPECT_RAISES_KIND(label, rc);
      printf("  old untouched %d, now %p\n", old == (void*)0x1,
             TVMFFIEnvGetStream(devices[i][0], devices[i][1]));
    }
  }
}

int main(void) {
  replaced_and_removed();
  library_function_codes();
  streams();
  printf("reentrant: done\n");
  return 0;
}
