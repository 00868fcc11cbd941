/* Callbacks recursing through the library (C -> FFI -> C, as Python ->
 * FFI -> Python does) until the thread's stack is nearly used up get a
 * RecursionError instead of overflowing the stack; the error unwinds every
 * level cleanly and the thread goes on. Ours only: the official library
 * has no check, and the process dies with SIGSEGV. Runs on threads with
 * small stacks (256 KiB), both the function's first caller and another
 * thread (a larger stack, so not a reused one), and checks that a shallow
 * recursion still works afterwards. */
#include <pthread.h>

#include "common.h"

static TVMFFIObjectHandle recurse_fn;

/* recurse(n): n == 0 ? 0 : recurse(n - 1) + 1, through TVMFFIFunctionCall. */
static int recurse(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)n;
  if (args[0].v_int64 == 0) {
    *result = any_int(0);
    return 0;
  }
  TVMFFIAny next = any_int(args[0].v_int64 - 1), out = any_none();
  int rc = TVMFFIFunctionCall(recurse_fn, &next, 1, &out);
  if (rc != 0) return rc;
  *result = any_int(out.v_int64 + 1);
  return 0;
}

/* Recurses `depth` levels on this thread; answers "ok <depth>" or the
 * raised error's kind and message. */
static void* run(void* arg) {
  int64_t depth = *(int64_t*)arg;
  TVMFFIAny n = any_int(depth), out = any_none();
  char* line = (char*)malloc(512);
  if (TVMFFIFunctionCall(recurse_fn, &n, 1, &out) == 0) {
    snprintf(line, 512, "ok %lld", (long long)out.v_int64);
  } else {
    char* text = take_error_kind();
    snprintf(line, 512, "%s", text ? text : "no error raised");
    free(text);
  }
  return line;
}

static char* on_thread(int64_t depth, size_t stack) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack);
  pthread_t t;
  CHECK(pthread_create(&t, &attr, run, &depth) == 0);
  void* line = NULL;
  pthread_join(t, &line);
  pthread_attr_destroy(&attr);
  return (char*)line;
}

int main(void) {
  int self = 1;
  CHECK_OK(TVMFFIFunctionCreate(&self, recurse, NULL, &recurse_fn));
  const char* expected =
      "RecursionError: maximum recursion depth exceeded: the thread's stack is nearly used up, "
      "calling the callback would overflow it";
  for (int round = 0; round < 2; ++round) {
    /* The first round's thread is the function's first caller, the second
     * is another thread. */
    size_t kib = round == 0 ? 256 : 512;
    char* deep = on_thread(10 * 1000 * 1000, kib * 1024);
    printf("thread %d, %zu KiB stack, 10^7 levels: %s\n", round, kib, deep);
    CHECK(strcmp(deep, expected) == 0);
    free(deep);
    char* shallow = on_thread(100, kib * 1024);
    printf("thread %d, %zu KiB stack, 100 levels: %s\n", round, kib, shallow);
    CHECK(strcmp(shallow, "ok 100") == 0);
    free(shallow);
  }
  char* main_thread = run(&(int64_t){1000});
  printf("main thread, 1000 levels: %s\n", main_thread);
  CHECK(strcmp(main_thread, "ok 1000") == 0);
  free(main_thread);
  TVMFFIObjectDecRef(recurse_fn);
  printf("deep-callbacks: ok\n");
  return 0;
}
