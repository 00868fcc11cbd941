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

/* Whether a fetch found nothing raised: NULL on the reference; ours hands
 * back a RuntimeError saying so (callers fetch only after a call failed,
 * and the official Python package and C++ headers crash on NULL;
 * test_boundary shows ours). Releases what it was handed. */
static int nothing_raised(TVMFFIObjectHandle err) {
  if (err == NULL) return 1;
  const TVMFFIErrorCell* cell = cell_of(err);
  int fallback = cell->message.size > 14 && memcmp(cell->message.data, "a call answered", 15) == 0;
  TVMFFIObjectDecRef(err);
  return fallback;
}

int main(void) {
  /* Nothing raised (see nothing_raised). */
  TVMFFIObjectHandle err = (TVMFFIObjectHandle)1;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(nothing_raised(err));

  TVMFFIErrorSetRaisedFromCStr("TypeError", "bad type");
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL && ((TVMFFIObject*)err)->type_index == kTVMFFIError);
  printf("from cstr: %.*s: %.*s\n", (int)cell_of(err)->kind.size, cell_of(err)->kind.data,
         (int)cell_of(err)->message.size, cell_of(err)->message.data);
  TVMFFIObjectDecRef(err);
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(nothing_raised(err));

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
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(nothing_raised(err));
  printf("threads ok\n");
  return 0;
}
