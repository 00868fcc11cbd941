/* TVM's backend services through a library's context slots (ours only: the
 * official library provides none of them), as run natively, under ASan
 * and under valgrind by the test command:
 * - CPU workspaces: allocated and freed; a stack buffer, a function's
 *   address and a double free refused with an error, nothing freed;
 * - parallel launches with barriers, from several threads at once;
 * - a child forked while another thread's first launch starts the pool
 *   gets a pool of its own (a hang fails by ctest's timeout). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static TVMFFIAny mod;

static int64_t call_int(const char* name, int64_t arg, int* rc) {
  TVMFFIAny f = module_function(mod, name, 0);
  TVMFFIAny x = any_int(arg), out = any_none();
  *rc = TVMFFIFunctionCall(f.v_obj, &x, 1, &out);
  any_release(&f);
  return out.v_int64;
}

static void* first_launch(void* arg) {
  (void)arg;
  int rc;
  int64_t sum = call_int("parallel", 0, &rc);
  return (void*)(intptr_t)(rc == 0 && sum > 0);
}

int main(void) {
  setenv("TVM_NUM_THREADS", "4", 1);
  TVMFFIAny path = any_c_str(PLUGIN_BACKEND);
  mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  int rc;
  /* A child forked while another thread's first launch starts the pool
   * (the native run; `cargo test` forks at eight moments). Not under
   * valgrind, which counts what the child inherits from the other thread
   * as leaked, nor under AddressSanitizer, whose allocator takes no lock
   * around fork (a child forked while another thread allocates waits on the
   * allocator's lock for good: seen in GCC 12's libasan), nor under
   * qemu-user, which aborts such a child when it starts threads (its own
   * assertion). */
  const char* preload = getenv("LD_PRELOAD");
  int no_fork = preload && strstr(preload, "vgpreload");
#if defined(UNDER_EMULATOR) || defined(__SANITIZE_ADDRESS__)
  no_fork = 1;
#endif
  pthread_t starter;
  CHECK(pthread_create(&starter, NULL, first_launch, NULL) == 0);
  pid_t pid = no_fork ? -1 : fork();
  if (pid == 0) {
    alarm(30);
    int64_t sum = call_int("parallel", 4, &rc);
    _exit(rc == 0 && sum == 10 ? 0 : 1);
  }
  if (pid > 0) {
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("forked child: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  void* started = NULL;
  CHECK(pthread_join(starter, &started) == 0);
  printf("first launch: %s\n", started ? "ok" : "WRONG");
  CHECK(started != NULL);
  /* Launches of 1 to 4 tasks. */
  for (int n = 1; n <= 4; ++n) {
    int64_t sum = call_int("parallel", n, &rc);
    printf("parallel(%d): rc %d sum %lld\n", n, rc, (long long)sum);
    CHECK(rc == 0 && sum == n * (n + 1) / 2);
  }
  /* Workspaces. */
  call_int("workspace", 0, &rc);
  printf("workspace: rc %d\n", rc);
  CHECK(rc == 0);
  const char* bad[] = {"a stack buffer", "a function's address", "a double free"};
  for (int c = 1; c <= 3; ++c) {
    call_int("workspace", c, &rc);
    char* text = take_error_kind();
    CHECK(text != NULL);
    printf("free of %s: rc %d %s\n", bad[c - 1],
           rc, strstr(text, "trying to free things that has not been allocated") ? "refused" : text);
    CHECK(rc != 0 && strstr(text, "trying to free things that has not been allocated"));
    free(text);
  }
  any_release(&mod);
  return 0;
}
