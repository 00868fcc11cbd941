/* What a compiler built on TVM-FFI does to the library while it is imported,
 * once per process, by phase:
 *   alloc_index    ~500 TVMFFITypeGetOrAllocIndex (new type keys)
 *   register_field ~1000 TVMFFITypeRegisterField (2 per type)
 *   register_attr  ~1800 TVMFFITypeRegisterAttr
 *   set_global     ~2000 TVMFFIFunctionSetGlobalFromMethodInfo
 *   get_global     ~2000 TVMFFIFunctionGetGlobal
 *   list_names     the Python package's name listing, 50 times: the functor
 *                  ffi.FunctionListGlobalNamesFunctor, f(-1) for the count,
 *                  f(i) for each name, each result released (per name)
 *   backtrace      ~110 TVMFFIBacktrace (the first apart: backtrace_first)
 *   error          an unknown type key (TVMFFITypeKeyToIndex), raised and
 *                  fetched
 * Prints `import_<phase> <ns per operation>`, `import_names_listed <n>` and
 * `import_total_us <µs>`.
 * Under callgrind (c-tests/bench/import_ir.sh) each phase's instructions are
 * dumped separately (CALLGRIND_ZERO_STATS / CALLGRIND_DUMP_STATS_AT).
 * IMPORT_SCALE=K multiplies every count but the listings. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_ZERO_STATS
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(label)
#endif

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void fail(const char* what) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  fprintf(stderr, "%s failed\n", what);
  exit(1);
}

static TVMFFIByteArray bytes(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  return b;
}

static int noop(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

static int get_i64(void* field, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = *(int64_t*)field;
  return 0;
}

static double phase_start;
static double total_ns;
static void begin(void) {
  CALLGRIND_ZERO_STATS;
  phase_start = now_ns();
}
static void end(const char* label, long ops) {
  double ns = now_ns() - phase_start;
  CALLGRIND_DUMP_STATS_AT(label);
  total_ns += ns;
  printf("import_%s %.2f\n", label, ns / (double)ops);
}

int main(void) {
  long k = getenv("IMPORT_SCALE") ? atol(getenv("IMPORT_SCALE")) : 1;
  if (k < 1) k = 1;
  const long n_types = 500 * k, n_attrs = 1800 * k, n_globals = 2000 * k, n_traces = 110 * k;
  int32_t* types = malloc(sizeof(int32_t) * (size_t)n_types);
  /* The names are made before the phases: only the library is measured. */
  char(*type_keys)[48] = malloc(sizeof(*type_keys) * (size_t)n_types);
  char(*global_names)[48] = malloc(sizeof(*global_names) * (size_t)n_globals);
  for (long i = 0; i < n_types; ++i) snprintf(type_keys[i], sizeof(type_keys[i]), "bench.import.T%ld", i);
  for (long i = 0; i < n_globals; ++i)
    snprintf(global_names[i], sizeof(global_names[i]), "bench.import.f%ld", i);

  /* Both libraries set up their tables before the first phase: the
   * official one while it is loaded (static initialisers), ours when the
   * registry and the type table are first touched. */
  {
    TVMFFIByteArray builtin = bytes("ffi.String");
    TVMFFIObjectHandle f = NULL;
    if (TVMFFIFunctionGetGlobal(&builtin, &f) != 0 || f == NULL) fail("warm-up lookup");
    TVMFFIObjectDecRef(f);
    TVMFFIByteArray object = bytes("ffi.Object");
    int32_t index = 0;
    if (TVMFFITypeKeyToIndex(&object, &index) != 0) fail("warm-up type lookup");
  }

  begin();
  for (long i = 0; i < n_types; ++i) {
    TVMFFIByteArray key = bytes(type_keys[i]);
    types[i] = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, kTVMFFIObject);
    if (types[i] < 0) fail("TVMFFITypeGetOrAllocIndex");
  }
  end("alloc_index", n_types);

  begin();
  for (long i = 0; i < n_types; ++i) {
    for (int f = 0; f < 2; ++f) {
      TVMFFIFieldInfo info;
      memset(&info, 0, sizeof(info));
      info.name = bytes(f == 0 ? "value" : "extent");
      info.doc = bytes("");
      info.metadata = bytes("{}");
      info.size = 8;
      info.alignment = 8;
      info.offset = 24 + 8 * f;
      info.getter = get_i64;
      info.field_static_type_index = kTVMFFIInt;
      if (TVMFFITypeRegisterField(types[i], &info) != 0) fail("TVMFFITypeRegisterField");
    }
  }
  end("register_field", 2 * n_types);

  begin();
  for (long j = 0; j < n_attrs; ++j) {
    static const char* attrs[] = {"__s_equal__", "__s_hash__", "__repr__", "__data_to_json__",
                                  "__data_from_json__", "__ffi_init__"};
    TVMFFIByteArray attr = bytes(attrs[j / n_types % 6]);
    TVMFFIAny value;
    memset(&value, 0, sizeof(value));
    value.type_index = kTVMFFIInt;
    value.v_int64 = j;
    if (TVMFFITypeRegisterAttr(types[j % n_types], &attr, &value) != 0) fail("TVMFFITypeRegisterAttr");
  }
  end("register_attr", n_attrs);

  TVMFFIObjectHandle fn = NULL;
  if (TVMFFIFunctionCreate(NULL, noop, NULL, &fn) != 0) fail("TVMFFIFunctionCreate");
  begin();
  for (long i = 0; i < n_globals; ++i) {
    TVMFFIMethodInfo info;
    memset(&info, 0, sizeof(info));
    info.name = bytes(global_names[i]);
    info.doc = bytes("");
    info.metadata = bytes("{\"type_schema\": \"\"}");
    info.method.type_index = kTVMFFIFunction;
    info.method.v_obj = fn;
    if (TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0) != 0) fail("SetGlobalFromMethodInfo");
  }
  end("set_global", n_globals);
  TVMFFIObjectDecRef(fn);

  begin();
  for (long i = 0; i < n_globals; ++i) {
    TVMFFIByteArray b = bytes(global_names[i]);
    TVMFFIObjectHandle f = NULL;
    if (TVMFFIFunctionGetGlobal(&b, &f) != 0 || f == NULL) fail("TVMFFIFunctionGetGlobal");
    TVMFFIObjectDecRef(f);
  }
  end("get_global", n_globals);

  TVMFFIByteArray functor_name = bytes("ffi.FunctionListGlobalNamesFunctor");
  TVMFFIObjectHandle make_functor = NULL;
  if (TVMFFIFunctionGetGlobal(&functor_name, &make_functor) != 0) fail("functor lookup");
  long listed = 0;
  begin();
  for (int round = 0; round < 50; ++round) {
    TVMFFIAny functor, count, arg, out;
    memset(&functor, 0, sizeof(functor));
    if (TVMFFIFunctionCall(make_functor, NULL, 0, &functor) != 0) fail("ffi.FunctionListGlobalNamesFunctor");
    memset(&arg, 0, sizeof(arg));
    arg.type_index = kTVMFFIInt;
    arg.v_int64 = -1;
    memset(&count, 0, sizeof(count));
    if (TVMFFIFunctionCall(functor.v_obj, &arg, 1, &count) != 0) fail("functor(-1)");
    for (int64_t i = 0; i < count.v_int64; ++i) {
      arg.v_int64 = i;
      memset(&out, 0, sizeof(out));
      if (TVMFFIFunctionCall(functor.v_obj, &arg, 1, &out) != 0) fail("functor(i)");
      if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
    }
    listed += count.v_int64;
    TVMFFIObjectDecRef(functor.v_obj);
  }
  end("list_names", listed);
  printf("import_names_listed %ld\n", listed);
  TVMFFIObjectDecRef(make_functor);

  /* The first backtrace of a process (reading debug information) apart
   * from the steady state. */
  begin();
  if (TVMFFIBacktrace("import.py", 0, "import", 0) == NULL) fail("TVMFFIBacktrace");
  end("backtrace_first", 1);
  begin();
  for (long i = 1; i < n_traces; ++i) {
    const TVMFFIByteArray* trace = TVMFFIBacktrace("import.py", (int)i, "import", 0);
    if (trace == NULL) fail("TVMFFIBacktrace");
  }
  end("backtrace", n_traces - 1);

  begin();
  for (long i = 0; i < k; ++i) {
    TVMFFIByteArray unknown = bytes("bench.import.NoSuchType");
    int32_t index = 0;
    if (TVMFFITypeKeyToIndex(&unknown, &index) == 0) fail("an unknown type key was found");
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err == NULL) fail("no error raised");
    TVMFFIObjectDecRef(err);
  }
  end("error", k);

  printf("import_total_us %.1f\n", total_ns / 1e3);
  free(types);
  free(type_keys);
  free(global_names);
  return 0;
}
