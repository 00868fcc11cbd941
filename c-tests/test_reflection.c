/* The whole reflection table a library registers by itself, printed in full:
 * every type (index, depth, ancestors, key hash, metadata), every field (doc,
 * metadata, flags, size, alignment, offset, getter/setter presence, default,
 * static type), every method (doc, metadata, flags, value kind), every
 * attribute column and which types fill it, and every global function with
 * its metadata. Then it exercises the field getters of the built-in types on
 * objects made through their creators. The transcript must be identical on
 * the official library and ours. */
#include "common.h"

static void print_text(const char* label, TVMFFIByteArray t) {
  printf(" %s=\"%.*s\"", label, (int)t.size, t.data ? t.data : "");
}

static const char* key_of(int32_t type_index) {
  static char buf[256];
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) {
    snprintf(buf, sizeof(buf), "<%d>", type_index);
  } else {
    snprintf(buf, sizeof(buf), "%.*s", (int)info->type_key.size, info->type_key.data);
  }
  return buf;
}

/* One line describing a value: type key, and the value of scalars/strings. */
static void print_value(const TVMFFIAny* v) {
  switch (v->type_index) {
    case kTVMFFINone: printf("None"); break;
    case kTVMFFIInt: printf("int:%lld", (long long)v->v_int64); break;
    case kTVMFFIBool: printf("bool:%lld", (long long)v->v_int64); break;
    case kTVMFFIFloat: printf("float:%g", v->v_float64); break;
    case kTVMFFIOpaquePtr: printf("void*:%s", v->v_ptr ? "set" : "NULL"); break;
    case kTVMFFISmallStr: case kTVMFFIStr: {
      TVMFFIByteArray t = any_text(v);
      printf("str:\"%.*s\"", (int)t.size, t.data);
      break;
    }
    default: printf("%s", key_of(v->type_index)); break;
  }
}

/* The globals only this library has: the artifact, inspection and module
 * export extensions. */
static const char* kSkippedGlobals[] = {
    "ffi.LibraryBin", "ffi.InspectFile", "ffi.ModuleFromExternC", "ffi.Artifact",
    "ffi.ModuleTreeWriteFormats",
    "ffi.Module.load_from_bytes.ffi.ArtifactSet", "ffi.Module.load_from_bytes.cuda",
    "ffi.CUDAModuleToArtifacts", "ffi.Triton", "__tvm_set_device", "ffi.MapGetMissingObject", NULL};

static int has_prefix_in(const char* name, const char** list) {
  for (; *list; ++list) {
    if (strncmp(name, *list, strlen(*list)) == 0) return 1;
  }
  return 0;
}

static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Strings of an Array<String> returned by a global, sorted, malloc'd. */
static char** sorted_strings(TVMFFIAny* arr, int64_t* n_out) {
  TVMFFIAny size = call_global("ffi.ArraySize", arr, 1);
  int64_t n = size.v_int64;
  char** out = (char**)calloc((size_t)n + 1, sizeof(char*));
  for (int64_t i = 0; i < n; ++i) {
    TVMFFIAny args[2] = {*arr, any_int(i)};
    TVMFFIAny s = call_global("ffi.ArrayGetItem", args, 2);
    TVMFFIByteArray t = any_text(&s);
    out[i] = (char*)malloc(t.size + 1);
    memcpy(out[i], t.data, t.size);
    out[i][t.size] = 0;
    any_release(&s);
  }
  qsort(out, (size_t)n, sizeof(char*), cmp_str);
  *n_out = n;
  return out;
}

static void free_strings(char** s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) free(s[i]);
  free(s);
}

static void print_type(const char* key) {
  TVMFFIByteArray k = byte_array(key);
  int32_t index = -1;
  CHECK_OK(TVMFFITypeKeyToIndex(&k, &index));
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  CHECK(info != NULL);
  /* Dynamic indices are registration order; print them too (they match). */
  printf("type %s index=%d depth=%d hash=%llx ancestors=", key, info->type_index,
         info->type_depth, (unsigned long long)info->type_key_hash);
  for (int32_t d = 0; d < info->type_depth; ++d) {
    printf("%s%.*s", d ? "," : "", (int)info->type_ancestors[d]->type_key.size,
           info->type_ancestors[d]->type_key.data);
  }
  printf("\n");
  if (info->metadata != NULL) {
    printf("  metadata");
    print_text("doc", info->metadata->doc);
    printf(" creator=%d total_size=%d seqhash=%d\n", info->metadata->creator != NULL,
           info->metadata->total_size, info->metadata->structural_eq_hash_kind);
  }
  for (int32_t i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo* f = &info->fields[i];
    printf("  field");
    print_text("name", f->name);
    print_text("doc", f->doc);
    print_text("metadata", f->metadata);
    printf(" flags=0x%llx size=%lld align=%lld offset=%lld getter=%d setter=%d static_type=%d",
           (unsigned long long)f->flags, (long long)f->size, (long long)f->alignment,
           (long long)f->offset, f->getter != NULL, f->setter != NULL,
           f->field_static_type_index);
    if (f->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
      printf(" default=");
      print_value(&f->default_value_or_factory);
    }
    printf("\n");
  }
  for (int32_t i = 0; i < info->num_methods; ++i) {
    const TVMFFIMethodInfo* m = &info->methods[i];
    printf("  method");
    print_text("name", m->name);
    print_text("doc", m->doc);
    print_text("metadata", m->metadata);
    printf(" flags=0x%llx value=", (unsigned long long)m->flags);
    print_value(&m->method);
    printf("\n");
  }
}

/* The attribute columns the reference declares at start-up. */
static const char* kColumns[] = {
    "__ffi_convert__", "__ffi_type_final__", "__ffi_new__", "__ffi_init__",
    "__ffi_shallow_copy__", "__ffi_repr__", "__any_hash__", "__any_equal__",
    "__s_visit__", "__s_mutate__", "__s_maybe_inplace_mutate__", "__data_to_json__",
    "__data_from_json__", "__ffi_eq__", "__ffi_hash__", "__ffi_compare__",
    "__s_equal__", "__s_hash__", "__ffi_enum__", "__no_such_column__"};

static void print_columns(void) {
  for (size_t c = 0; c < sizeof(kColumns) / sizeof(kColumns[0]); ++c) {
    TVMFFIByteArray name = byte_array(kColumns[c]);
    const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&name);
    if (col == NULL) {
      printf("column %s: absent\n", kColumns[c]);
      continue;
    }
    printf("column %s: begin=%d\n", kColumns[c], col->begin_index);
    for (int32_t i = 0; i < col->size; ++i) {
      if (col->data[i].type_index == kTVMFFINone) continue;
      printf("  %s: ", key_of(col->begin_index + i));
      print_value(&col->data[i]);
      printf("\n");
    }
  }
}

int main(void) {
  TVMFFIAny keys_arr = call_global("ffi.GetRegisteredTypeKeys", NULL, 0);
  int64_t n_keys = 0;
  char** keys = sorted_strings(&keys_arr, &n_keys);
  any_release(&keys_arr);
  printf("types: %lld\n", (long long)n_keys);
  for (int64_t i = 0; i < n_keys; ++i) print_type(keys[i]);
  free_strings(keys, n_keys);

  print_columns();

  TVMFFIAny functor = call_global("ffi.FunctionListGlobalNamesFunctor", NULL, 0);
  TVMFFIAny minus_one = any_int(-1);
  TVMFFIAny count = any_none();
  CHECK_OK(TVMFFIFunctionCall(functor.v_obj, &minus_one, 1, &count));

  char** names = (char**)calloc((size_t)count.v_int64 + 1, sizeof(char*));
  for (int64_t i = 0; i < count.v_int64; ++i) {
    TVMFFIAny idx = any_int(i);
    TVMFFIAny s = any_none();
    CHECK_OK(TVMFFIFunctionCall(functor.v_obj, &idx, 1, &s));
    TVMFFIByteArray t = any_text(&s);
    names[i] = (char*)malloc(t.size + 1);
    memcpy(names[i], t.data, t.size);
    names[i][t.size] = 0;
    any_release(&s);
  }
  qsort(names, (size_t)count.v_int64, sizeof(char*), cmp_str);
  for (int64_t i = 0; i < count.v_int64; ++i) {
    if (has_prefix_in(names[i], kSkippedGlobals)) continue;
    TVMFFIAny arg = any_none();
    TVMFFIByteArray n = byte_array(names[i]);
    CHECK_OK(TVMFFIStringFromByteArray(&n, &arg));
    TVMFFIAny meta = call_global("ffi.GetGlobalFuncMetadata", &arg, 1);
    TVMFFIByteArray t = any_text(&meta);
    printf("global %s metadata=%.*s\n", names[i], (int)t.size, t.data);
    any_release(&meta);
    any_release(&arg);
  }
  free_strings(names, count.v_int64);
  any_release(&functor);
  return 0;
}
