/* Errors: the raised slot (one per thread), creation, causes, backtraces. */
#include <pthread.h>
#include "common.h"

static TVMFFIErrorCell* cell_of(TVMFFIObjectHandle err) {
  return (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
}

static void* raise_in_thread(void* arg) {
  long id = (long)(intptr_t)arg;
  char msg[32];
  snprintf(msg, sizeof(msg), "thread %ld", id);
  for (int i = 0; i < 1000; ++i) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", msg);
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err == NULL) return (void*)1;
    TVMFFIErrorCell* cell = cell_of(err);
    int ok = cell->message.size == strlen(msg) && memcmp(cell->message.data, msg, strlen(msg)) == 0;
    TVMFFIObjectDecRef(err);
    if (!ok) return (void*)1;
  }
  /* An error raised here is invisible to other threads and freed at exit. */
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "left behind at thread exit");
  return NULL;
}

/* A C callee that fails with `*code` and raises nothing: -2 says the
 * frontend holds its error, which callers pass on as is. */
static int fail_without_raising(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n; (void)result;
  return *(int*)self;
}

/* A C callee that raises a ValueError and answers -1. */
static int fail_raising(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n; (void)result;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "raised by the callee");
  return -1;
}

/* Fetches twice and prints what each fetch found: a fetch empties the slot. */
static void fetch_twice(const char* label) {
  for (int i = 1; i <= 2; ++i) {
    TVMFFIObjectHandle err = (TVMFFIObjectHandle)1;
    TVMFFIErrorMoveFromRaised(&err);
    if (err == NULL) {
      printf("%s: fetch %d: NULL\n", label, i);
      continue;
    }
    printf("%s: fetch %d: %.*s: %.*s\n", label, i, (int)cell_of(err)->kind.size, cell_of(err)->kind.data,
           (int)cell_of(err)->message.size, cell_of(err)->message.data);
    TVMFFIObjectDecRef(err);
  }
}

/* A thread that raised nothing finds nothing. */
static void* fetch_in_fresh_thread(void* arg) {
  (void)arg;
  fetch_twice("a thread that raised nothing");
  return NULL;
}

int main(void) {
  /* Nothing raised: the fetch writes NULL (over whatever was there). */
  fetch_twice("nothing raised");
  /* Raise, fetch, fetch again: the first fetch empties the slot. */
  TVMFFIErrorSetRaisedFromCStr("TypeError", "bad type");
  fetch_twice("raised once");
  TVMFFIObjectHandle err = NULL;

  /* What callers see of C callees: a raised error, and -2 with nothing
   * raised (the frontend holds its error), passed on untouched. */
  int minus_two = -2;
  TVMFFIObjectHandle f = NULL;
  TVMFFIAny result = any_none();
  CHECK_OK(TVMFFIFunctionCreate(&minus_two, fail_without_raising, NULL, &f));
  printf("callee answering -2: call returns %d\n", TVMFFIFunctionCall(f, NULL, 0, &result));
  fetch_twice("after -2");
  TVMFFIObjectDecRef(f);
  CHECK_OK(TVMFFIFunctionCreate(&minus_two, fail_raising, NULL, &f));
  printf("callee raising: call returns %d\n", TVMFFIFunctionCall(f, NULL, 0, &result));
  fetch_twice("after raising");
  TVMFFIObjectDecRef(f);

  /* Successful calls leave a raised error where it is. */
  TVMFFIErrorSetRaisedFromCStr("KeyError", "still raised");
  {
    TVMFFIByteArray known = byte_array("ffi.String"), unknown = byte_array("no.such.global");
    TVMFFIObjectHandle g = NULL, missing = (TVMFFIObjectHandle)1;
    CHECK_OK(TVMFFIFunctionGetGlobal(&known, &g));
    CHECK_OK(TVMFFIFunctionGetGlobal(&unknown, &missing));
    printf("unknown global: %s\n", missing == NULL ? "NULL" : "not NULL");
    TVMFFIAny text = any_none();
    TVMFFIByteArray word = byte_array("a string long enough to be an object");
    CHECK_OK(TVMFFIStringFromByteArray(&word, &text));
    TVMFFIAny out = any_none();
    CHECK_OK(TVMFFIFunctionCall(g, &text, 1, &out));
    any_release(&out);
    any_release(&text);
    int32_t index = -1;
    TVMFFIByteArray key = byte_array("ffi.Array");
    CHECK_OK(TVMFFITypeKeyToIndex(&key, &index));
    TVMFFIObjectIncRef(g);
    TVMFFIObjectDecRef(g);
    TVMFFIObjectDecRef(g);
  }
  fetch_twice("after successful calls");

  const char* parts[] = {"a", NULL, "b", "c"};
  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 4);
  TVMFFIErrorMoveFromRaised(&err);
  printf("from parts: %.*s\n", (int)cell_of(err)->message.size, cell_of(err)->message.data);

  /* SetRaised borrows: the caller's reference stays valid. */
  TVMFFIErrorSetRaised(err);
  printf("after SetRaised ref_count %#llx\n",
         (unsigned long long)((TVMFFIObject*)err)->combined_ref_count);
  TVMFFIObjectHandle again = NULL;
  TVMFFIErrorMoveFromRaised(&again);
  CHECK(again == err);
  TVMFFIObjectDecRef(again);
  /* A new raise releases what the slot held. */
  TVMFFIErrorSetRaised(err);
  TVMFFIErrorSetRaisedFromCStr("IndexError", "replaces");
  printf("after replace ref_count %#llx\n",
         (unsigned long long)((TVMFFIObject*)err)->combined_ref_count);
  TVMFFIErrorMoveFromRaised(&again);
  printf("slot holds %.*s\n", (int)cell_of(again)->kind.size, cell_of(again)->kind.data);
  TVMFFIObjectDecRef(again);

  /* Create with cause and extra context; update the backtrace. */
  TVMFFIByteArray kind = byte_array("RuntimeError"), msg = byte_array("outer"),
                  bt = byte_array("  File \"a.c\", line 1, in f\n");
  TVMFFIObjectHandle outer = NULL;
  CHECK_OK(TVMFFIErrorCreateWithCauseAndExtraContext(&kind, &msg, &bt, err, NULL, &outer));
  CHECK(cell_of(outer)->cause_chain == err && cell_of(outer)->extra_context == NULL);
  printf("cause ref_count %#llx\n", (unsigned long long)((TVMFFIObject*)err)->combined_ref_count);
  TVMFFIByteArray more = byte_array("  File \"b.c\", line 2, in g\n");
  cell_of(outer)->update_backtrace(outer, &more, kTVMFFIBacktraceUpdateModeAppend);
  printf("appended backtrace: %.*s", (int)cell_of(outer)->backtrace.size, cell_of(outer)->backtrace.data);
  cell_of(outer)->update_backtrace(outer, &more, kTVMFFIBacktraceUpdateModeReplace);
  printf("replaced backtrace: %.*s", (int)cell_of(outer)->backtrace.size, cell_of(outer)->backtrace.data);
  TVMFFIObjectDecRef(outer);
  printf("cause ref_count after outer dies %#llx\n",
         (unsigned long long)((TVMFFIObject*)err)->combined_ref_count);
  TVMFFIObjectDecRef(err);

  TVMFFIObjectHandle plain = NULL;
  TVMFFIByteArray empty = {NULL, 0};
  CHECK_OK(TVMFFIErrorCreate(&kind, &msg, &empty, &plain));
  CHECK(cell_of(plain)->backtrace.size == 0);
  TVMFFIObjectDecRef(plain);

  /* A backtrace with a given location puts it first. */
  const TVMFFIByteArray* trace = TVMFFIBacktrace("here.c", 42, "main", 0);
  CHECK(trace != NULL && trace->size >= strlen("  File \"here.c\", line 42, in main\n"));
  CHECK(memcmp(trace->data, "  File \"here.c\", line 42, in main\n", 34) == 0);
  printf("backtrace first line ok\n");

  /* One slot per thread. */
  pthread_t threads[4];
  for (long i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, raise_in_thread, (void*)(intptr_t)i);
  for (int i = 0; i < 4; ++i) {
    void* ret;
    pthread_join(threads[i], &ret);
    CHECK(ret == NULL);
  }
  fetch_twice("after the threads");
  pthread_t fresh;
  pthread_create(&fresh, NULL, fetch_in_fresh_thread, NULL);
  pthread_join(fresh, NULL);
  printf("threads ok\n");
  return 0;
}
