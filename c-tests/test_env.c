/* Environment: signal checks through frontend callbacks, streams per thread,
 * and init-once handles. */
#include <pthread.h>
#include "common.h"

static int signal_pending = 0, gil_held = 0;
static int check_signals(void) { return signal_pending; }
static void* gil_ensure(void) { gil_held = 1; return (void*)&gil_held; }
static void gil_release(void* state) { CHECK(state == &gil_held); gil_held = 0; }

static void* stream_in_thread(void* arg) {
  (void)arg;
  return TVMFFIEnvGetStream(kDLCUDA, 0);
}

static int init_calls = 0;
static int init_ok(void** result) { ++init_calls; *result = (void*)&init_calls; return 0; }
static int init_null(void** result) { *result = NULL; return 0; }
static int deinit_calls = 0;
static int deinit(void* handle) { CHECK(handle == &init_calls); ++deinit_calls; return 0; }

int main(void) {
  printf("check signals without frontend -> %d\n", TVMFFIEnvCheckSignals());
  CHECK_OK(TVMFFIEnvRegisterCAPI("PyGILState_Ensure", (void*)gil_ensure));
  CHECK_OK(TVMFFIEnvRegisterCAPI("PyGILState_Release", (void*)gil_release));
  CHECK_OK(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", (void*)check_signals));
  printf("check signals, none pending -> %d\n", TVMFFIEnvCheckSignals());
  signal_pending = 1;
  printf("check signals, pending -> %d, gil released %d\n", TVMFFIEnvCheckSignals(), gil_held == 0);
  EXPECT_RAISES("register unknown env API", TVMFFIEnvRegisterCAPI("Py_Unknown", (void*)gil_ensure));

  /* Streams are per thread. */
  CHECK_OK(TVMFFIEnvSetStream(kDLCUDA, 0, (void*)0x10, NULL));
  CHECK_OK(TVMFFIEnvSetStream(kDLCUDA, 1, (void*)0x11, NULL));
  printf("streams: dev0 %p dev1 %p dev2 %p\n", TVMFFIEnvGetStream(kDLCUDA, 0),
         TVMFFIEnvGetStream(kDLCUDA, 1), TVMFFIEnvGetStream(kDLCUDA, 2));
  /* Devices inside and beyond the common range (type < 32, id < 16): set,
   * read back, replace (the previous stream comes back), reset. (Negative
   * ids are left out: the official library aborts on them.) */
  int devices[][2] = {{kDLCUDA, 15}, {kDLCUDA, 16}, {kDLCUDA, 1000}, {31, 0}, {32, 0}, {1000, 7}};
  for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); ++i) {
    int dt = devices[i][0], id = devices[i][1];
    void* prev = (void*)1;
    CHECK_OK(TVMFFIEnvSetStream(dt, id, (void*)(0x100 + i), &prev));
    void* got = TVMFFIEnvGetStream(dt, id);
    void* prev2 = NULL;
    CHECK_OK(TVMFFIEnvSetStream(dt, id, (void*)(0x200 + i), &prev2));
    void* prev3 = NULL;
    CHECK_OK(TVMFFIEnvSetStream(dt, id, NULL, &prev3));
    printf("stream (%d, %d): first prev %p, got %p, replaced %p, reset returns %p, after %p\n", dt,
           id, prev, got, prev2, prev3, TVMFFIEnvGetStream(dt, id));
  }
  pthread_t t;
  void* other = (void*)1;
  pthread_create(&t, NULL, stream_in_thread, NULL);
  pthread_join(t, &other);
  printf("another thread sees %p\n", other);

  void* handle = NULL;
  CHECK_OK(TVMFFIHandleInitOnce(&handle, init_ok));
  CHECK_OK(TVMFFIHandleInitOnce(&handle, init_ok));
  printf("init once: calls %d set %d\n", init_calls, handle == &init_calls);
  void* other_handle = NULL;
  EXPECT_RAISES("init returning NULL", TVMFFIHandleInitOnce(&other_handle, init_null));
  CHECK_OK(TVMFFIHandleDeinitOnce(&handle, deinit));
  CHECK_OK(TVMFFIHandleDeinitOnce(&handle, deinit));
  printf("deinit once: calls %d cleared %d\n", deinit_calls, handle == NULL);
  return 0;
}
