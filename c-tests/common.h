/* Shared helpers of the C tests: checks that report file:line and the raised
 * error (kind and message), and small constructors. Every test prints a
 * transcript on stdout that must be identical for the official library and
 * ours; diagnostics go to stderr. */
#ifndef TVM_FFI_RS_C_TESTS_COMMON_H_
#define TVM_FFI_RS_C_TESTS_COMMON_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "tensor.h"

static inline void print_raised(const char* where) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) {
    fprintf(stderr, "%s: no error raised\n", where);
    return;
  }
  const TVMFFIErrorCell* cell =
      (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  fprintf(stderr, "%s: %.*s: %.*s\n", where, (int)cell->kind.size, cell->kind.data,
          (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(err);
}

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    int rc_ = (expr);                                                      \
    if (rc_ != 0) {                                                        \
      char where_[512];                                                    \
      snprintf(where_, sizeof(where_), "%s:%d: %s returned %d", __FILE__, __LINE__, #expr, rc_); \
      print_raised(where_);                                                \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

/* Takes the raised error and returns "kind: message" as a malloc'd string:
 * transcripts show the full message, so they differ whenever what a caller
 * sees differs. */
static inline char* take_error_kind(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) return NULL;
  const TVMFFIErrorCell* cell =
      (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  size_t n = cell->kind.size + 2 + cell->message.size;
  char* text = (char*)malloc(n + 1);
  memcpy(text, cell->kind.data, cell->kind.size);
  memcpy(text + cell->kind.size, ": ", 2);
  memcpy(text + cell->kind.size + 2, cell->message.data, cell->message.size);
  text[n] = 0;
  TVMFFIObjectDecRef(err);
  return text;
}

/* Checks that a call failed with return code `rc` and prints the code and
 * the raised error: its kind and full message, or only its kind when
 * `kind_only` (for errors whose message is deliberately clearer than the
 * reference's, which fails a bare internal check there). */
static inline void print_failure(const char* label, int rc, int kind_only) {
  CHECK(rc != 0);
  char* text = take_error_kind();
  CHECK(text != NULL);
  if (kind_only) *strchr(text, ':') = 0;
  printf("%s: rc %d raises %s\n", label, rc, text);
  free(text);
}

/* Expects `expr` to fail; prints the code, kind and full message. */
#define EXPECT_RAISES(label, expr) print_failure(label, (expr), 0)
/* Expects `expr` to fail; prints the code and kind only. */
#define EXPECT_RAISES_KIND(label, expr) print_failure(label, (expr), 1)

static inline TVMFFIByteArray byte_array(const char* s) {
  TVMFFIByteArray a;
  a.data = s;
  a.size = strlen(s);
  return a;
}

static inline TVMFFIAny any_none(void) {
  TVMFFIAny a;
  memset(&a, 0, sizeof(a));
  a.type_index = kTVMFFINone;
  return a;
}

static inline TVMFFIAny any_int(int64_t v) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

/* Releases an owned Any. */
static inline void any_release(TVMFFIAny* a) {
  if (a->type_index >= kTVMFFIStaticObjectBegin && a->v_obj != NULL) {
    TVMFFIObjectDecRef(a->v_obj);
  }
  *a = any_none();
}

/* The bytes of an owned or borrowed string/bytes Any. */
static inline TVMFFIByteArray any_text(const TVMFFIAny* a) {
  TVMFFIByteArray r = {NULL, 0};
  if (a->type_index == kTVMFFISmallStr || a->type_index == kTVMFFISmallBytes) {
    r.data = a->v_bytes;
    r.size = a->small_str_len;
  } else if (a->type_index == kTVMFFIStr || a->type_index == kTVMFFIBytes) {
    r = *(const TVMFFIByteArray*)((const char*)a->v_obj + sizeof(TVMFFIObject));
  }
  return r;
}

/* A String value (small or heap) made by the library. */
static inline TVMFFIAny any_str(const char* s) {
  TVMFFIByteArray b = byte_array(s);
  TVMFFIAny out = any_none();
  CHECK_OK(TVMFFIStringFromByteArray(&b, &out));
  return out;
}

/* A borrowed C string as an argument (kTVMFFIRawStr). */
static inline TVMFFIAny any_c_str(const char* s) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* Looks up a global function, failing the test if it is missing. */
static inline TVMFFIObjectHandle get_global(const char* name) {
  TVMFFIByteArray n = byte_array(name);
  TVMFFIObjectHandle f = NULL;
  CHECK_OK(TVMFFIFunctionGetGlobal(&n, &f));
  if (f == NULL) {
    fprintf(stderr, "missing global %s\n", name);
    exit(1);
  }
  return f;
}

/* Calls the global `name`, failing the test on error; the result is owned. */
static inline TVMFFIAny call_global(const char* name, TVMFFIAny* args, int n) {
  TVMFFIObjectHandle f = get_global(name);
  TVMFFIAny r = any_none();
  CHECK_OK(TVMFFIFunctionCall(f, args, n, &r));
  TVMFFIObjectDecRef(f);
  return r;
}

/* `ffi.ModuleGetFunction(mod, name, query_imports)`: the function (owned),
 * or None where the module has none of that name. */
static inline TVMFFIAny module_function(TVMFFIAny mod, const char* name, int query_imports) {
  TVMFFIAny args[3] = {mod, any_c_str(name), any_none()};
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = query_imports;
  return call_global("ffi.ModuleGetFunction", args, 3);
}

/* A Tensor value over `managed`, set up as a versioned DLPack float32 CPU
 * tensor of `data` (cpu_f32_tensor) released by `deleter`. */
static inline TVMFFIAny cpu_f32_tensor_value(DLManagedTensorVersioned* managed,
                                             void (*deleter)(DLManagedTensorVersioned*), void* data,
                                             int32_t ndim, int64_t* shape) {
  memset(managed, 0, sizeof(*managed));
  managed->version.major = 1;
  managed->deleter = deleter;
  managed->dl_tensor = cpu_f32_tensor(data, ndim, shape);
  TVMFFIAny tensor = any_none();
  tensor.type_index = kTVMFFITensor;
  CHECK_OK(TVMFFITensorFromDLPackVersioned(managed, 0, 0, (TVMFFIObjectHandle*)&tensor.v_obj));
  return tensor;
}

#endif  /* TVM_FFI_RS_C_TESTS_COMMON_H_ */
