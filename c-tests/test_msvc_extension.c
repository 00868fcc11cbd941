/* A C++ extension built with MSVC by others: the official win_amd64
 * wheel's tvm_ffi_testing.dll, which imports tvm::ffi::Error's members
 * (MSVC's C++ ABI) from tvm_ffi.dll. Windows only, run under Wine on ours
 * and on the official DLL; the transcripts must match. Every global it
 * registers is called: with no arguments (most raise the argument-count
 * error, thrown as a C++ exception inside the extension and raised through
 * the C API), and those that take them with arguments of their kind,
 * including the ones that raise, nest calls and build objects. */
#include <windows.h>
#include "common.h"

static int cmp_str(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* The type key of a type index. */
static TVMFFIByteArray type_key(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) return byte_array("?");
  return info->type_key;
}

/* One line: the call, then its value (POD values, strings, and the type of
 * objects) or its error (kind and full message). */
static void report(const char* call, int rc, TVMFFIAny* out) {
  if (rc != 0) {
    char* text = take_error_kind();
    if (text != NULL && strlen(text) > 300) {
      printf("%s: rc %d raises %.60s... (%zu bytes)\n", call, rc, text, strlen(text));
    } else {
      printf("%s: rc %d raises %s\n", call, rc, text ? text : "(nothing raised)");
    }
    free(text);
    return;
  }
  if (strstr(call, "_c_symbol") != NULL && out->type_index == kTVMFFIInt) {
    printf("%s: int (an address: %s)\n", call, out->v_int64 != 0 ? "not NULL" : "NULL");
    return;
  }
  switch (out->type_index) {
    case kTVMFFINone:
      printf("%s: None\n", call);
      break;
    case kTVMFFIInt:
      printf("%s: int %lld\n", call, (long long)out->v_int64);
      break;
    case kTVMFFIBool:
      printf("%s: bool %lld\n", call, (long long)out->v_int64);
      break;
    case kTVMFFIFloat:
      printf("%s: float %g\n", call, out->v_float64);
      break;
    case kTVMFFISmallStr:
    case kTVMFFIStr: {
      TVMFFIByteArray t = any_text(out);
      printf("%s: str \"%.*s\"\n", call, (int)t.size, t.data);
      break;
    }
    default: {
      TVMFFIByteArray key = type_key(out->type_index);
      printf("%s: %.*s\n", call, (int)key.size, key.data);
    }
  }
  any_release(out);
}

static void call(const char* label, const char* name, TVMFFIAny* args, int n) {
  TVMFFIObjectHandle f = get_global(name);
  TVMFFIAny out = any_none();
  int rc = TVMFFIFunctionCall(f, args, n, &out);
  report(label, rc, &out);
  TVMFFIObjectDecRef(f);
}

/* A global as an argument (owned). */
static TVMFFIAny any_global(const char* name) {
  TVMFFIAny a = any_none();
  a.v_obj = (TVMFFIObject*)get_global(name);
  a.type_index = kTVMFFIFunction;
  return a;
}

static int skipped(const char* name) {
  static const char* const kSkipped[] = {"testing.apply", "testing.echo",
                                         "testing.run_check_signal"};
  for (size_t i = 0; i < sizeof(kSkipped) / sizeof(kSkipped[0]); ++i) {
    if (strcmp(name, kSkipped[i]) == 0) return 1;
  }
  return 0;
}

int main(void) {
  HMODULE testing = LoadLibraryA(TESTING_DLL);
  if (testing == NULL) {
    printf("LoadLibrary(tvm_ffi_testing.dll) failed: %lu\n", (unsigned long)GetLastError());
    return 1;
  }
  printf("tvm_ffi_testing.dll loaded\n");

  /* Every testing.* global, called with nothing, but for the packed ones
   * that read their first argument unchecked (on either DLL they read past
   * the arguments) and testing.run_check_signal, which waits for a
   * signal. */
  TVMFFIAny functor = call_global("ffi.FunctionListGlobalNamesFunctor", NULL, 0);
  TVMFFIAny minus_one = any_int(-1), count = any_none();
  CHECK_OK(TVMFFIFunctionCall(functor.v_obj, &minus_one, 1, &count));
  char** names = (char**)calloc((size_t)count.v_int64 + 1, sizeof(char*));
  int64_t n = 0;
  for (int64_t i = 0; i < count.v_int64; ++i) {
    TVMFFIAny idx = any_int(i), s = any_none();
    CHECK_OK(TVMFFIFunctionCall(functor.v_obj, &idx, 1, &s));
    TVMFFIByteArray t = any_text(&s);
    if (t.size > 8 && memcmp(t.data, "testing.", 8) == 0) {
      names[n] = (char*)malloc(t.size + 1);
      memcpy(names[n], t.data, t.size);
      names[n++][t.size] = 0;
    }
    any_release(&s);
  }
  any_release(&functor);
  qsort(names, (size_t)n, sizeof(char*), cmp_str);
  printf("%lld testing globals\n", (long long)n);
  for (int64_t i = 0; i < n; ++i) {
    if (skipped(names[i])) {
      free(names[i]);
      continue;
    }
    char label[256];
    snprintf(label, sizeof(label), "%s()", names[i]);
    call(label, names[i], NULL, 0);
    free(names[i]);
  }
  free(names);

  /* With arguments. */
  TVMFFIAny a[4];
  a[0] = any_int(41);
  call("testing.add_one(41)", "testing.add_one", a, 1);
  a[0] = any_str("forty-one");
  call("testing.add_one(\"forty-one\")", "testing.add_one", a, 1);
  any_release(&a[0]);
  a[0] = any_str("ValueError");
  a[1] = any_str("raised by the extension");
  call("testing.test_raise_error(ValueError, ...)", "testing.test_raise_error", a, 2);
  any_release(&a[0]);
  any_release(&a[1]);
  /* A message of 5000 bytes: the std::string the extension passes is a
   * big block of MSVC's allocator (aligned, its heap pointer before it). */
  char* big = (char*)malloc(5001);
  memset(big, 'x', 5000);
  big[5000] = 0;
  a[0] = any_str("IndexError");
  a[1] = any_str(big);
  call("testing.test_raise_error(IndexError, 5000 bytes)", "testing.test_raise_error", a, 2);
  any_release(&a[0]);
  any_release(&a[1]);
  free(big);
  a[0] = any_str("a string longer than fifteen bytes, which std::string keeps on the heap");
  call("testing.echo(long str)", "testing.echo", a, 1);
  any_release(&a[0]);
  a[0] = any_int(7);
  call("testing.nop(7)", "testing.nop", a, 1);

  /* Nested: the extension calls back into a function, which calls the
   * extension again; errors cross both ways. */
  a[0] = any_global("testing.add_one");
  a[1] = any_int(1);
  call("testing.apply(testing.add_one, 1)", "testing.apply", a, 2);
  any_release(&a[0]);
  a[0] = any_global("testing.test_raise_error");
  a[1] = any_str("RuntimeError");
  a[2] = any_str("raised two calls down");
  call("testing.apply(testing.test_raise_error, ...)", "testing.apply", a, 3);
  any_release(&a[0]);
  any_release(&a[1]);
  any_release(&a[2]);
  a[0] = any_global("testing.apply");
  a[1] = any_global("testing.test_raise_error");
  a[2] = any_str("TypeError");
  a[3] = any_str("raised three calls down");
  call("testing.apply(testing.apply, testing.test_raise_error, ...)", "testing.apply", a, 4);
  for (int i = 0; i < 4; ++i) any_release(&a[i]);
  a[0] = any_global("testing.apply");
  a[1] = any_global("testing.add_one");
  a[2] = any_str("not an int");
  call("testing.apply(testing.apply, testing.add_one, \"not an int\")", "testing.apply", a, 3);
  for (int i = 0; i < 3; ++i) any_release(&a[i]);

  /* Containers in and out of the extension's typed signatures. */
  TVMFFIAny items[3] = {any_int(1), any_int(2), any_int(3)};
  a[0] = call_global("ffi.Array", items, 3);
  call("testing.schema_id_arr_int([1, 2, 3])", "testing.schema_id_arr_int", a, 1);
  call("testing.schema_id_arr_str([1, 2, 3])", "testing.schema_id_arr_str", a, 1);
  any_release(&a[0]);
  TVMFFIAny kv[2] = {any_str("key"), any_str("value")};
  a[0] = call_global("ffi.Map", kv, 2);
  call("testing.schema_id_map_str_str({key: value})", "testing.schema_id_map_str_str", a, 1);
  call("testing.schema_id_map_str_int({key: value})", "testing.schema_id_map_str_int", a, 1);
  any_release(&a[0]);
  any_release(&kv[0]);
  any_release(&kv[1]);
  a[0] = any_none();
  call("testing.schema_id_opt_int(None)", "testing.schema_id_opt_int", a, 1);
  a[0] = any_str("variant");
  call("testing.schema_id_variant_int_str(\"variant\")", "testing.schema_id_variant_int_str", a, 1);
  any_release(&a[0]);
  a[0] = any_none();
  a[0].type_index = kTVMFFIBool;
  a[0].v_int64 = 1;
  call("testing.make_visit_region_graph(true)", "testing.make_visit_region_graph", a, 1);

  /* Objects built by the extension, then looked at by it. */
  TVMFFIObjectHandle make = get_global("testing.make_unregistered_object");
  TVMFFIAny obj = any_none();
  CHECK_OK(TVMFFIFunctionCall(make, NULL, 0, &obj));
  TVMFFIObjectDecRef(make);
  call("testing.object_use_count(obj)", "testing.object_use_count", &obj, 1);
  TVMFFIAny two[2] = {obj, obj};
  call("testing.echo(obj, obj)", "testing.echo", two, 2);
  any_release(&obj);

  /* The extension stays loaded (its globals live in the registry). */
  printf("done\n");
  return 0;
}
