/* C benchmark of the core paths, built once against our library and once
 * against the official one (see run.sh). Prints "<path> <ns/op>" lines: the
 * best of several repetitions of a timed loop. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int nop(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  result->type_index = kTVMFFINone;
  return 0;
}

static volatile int64_t sink;
#define REPS 7
#define BENCH(label, iters, body)                                 \
  do {                                                            \
    double best = 1e30;                                           \
    for (int rep = 0; rep < REPS; ++rep) {                        \
      double t0 = now_ns();                                       \
      for (long it = 0; it < (iters); ++it) { body; }             \
      double per = (now_ns() - t0) / (double)(iters);             \
      if (per < best) best = per;                                 \
    }                                                             \
    printf("%-28s %8.2f\n", label, best);                         \
  } while (0)

int main(void) {
  TVMFFIObjectHandle f = NULL;
  int self = 1;
  if (TVMFFIFunctionCreate(&self, nop, NULL, &f) != 0) return 1;
  TVMFFIAny args[3];
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIInt;
  args[1].type_index = kTVMFFIFloat;
  args[2].type_index = kTVMFFIRawStr;
  args[2].v_c_str = "x";
  TVMFFIAny result;
  const long N = 2000000;

  BENCH("call_0_args", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f, args, 0, &result); });
  BENCH("call_1_arg", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f, args, 1, &result); });
  BENCH("call_3_args", N, { result.type_index = kTVMFFINone; sink += TVMFFIFunctionCall(f, args, 3, &result); });

  TVMFFIByteArray name = {"ffi.FunctionRemoveGlobal", strlen("ffi.FunctionRemoveGlobal")};
  BENCH("global_lookup", N, {
    TVMFFIObjectHandle g;
    TVMFFIFunctionGetGlobal(&name, &g);
    TVMFFIObjectDecRef(g);
  });
  BENCH("incref_decref", N, { TVMFFIObjectIncRef(f); TVMFFIObjectDecRef(f); });

  TVMFFIByteArray small = {"hello", 5};
  BENCH("string_small", N, { TVMFFIStringFromByteArray(&small, &result); sink += result.v_int64; });
  const char* text64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  TVMFFIByteArray big = {text64, 64};
  BENCH("string_64_bytes", N, {
    TVMFFIStringFromByteArray(&big, &result);
    TVMFFIObjectDecRef(result.v_obj);
  });
  BENCH("error_raise_fetch", N / 100, {
    TVMFFIObjectHandle err;
    TVMFFIErrorSetRaisedFromCStr("ValueError", "benchmark error");
    TVMFFIErrorMoveFromRaised(&err);
    TVMFFIObjectDecRef(err);
  });
  TVMFFIObjectDecRef(f);
  return (int)(sink & 0);
}
