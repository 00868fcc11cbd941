/* The type table: static keys, allocation, reflection, attribute columns. */
#include "common.h"

static int32_t alloc(const char* key, int32_t depth, int32_t slots, int32_t overflow, int32_t parent) {
  TVMFFIByteArray k = byte_array(key);
  return TVMFFITypeGetOrAllocIndex(&k, -1, depth, slots, overflow, parent);
}

static void show_info(int32_t index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  CHECK(info != NULL && info->type_index == index);
  printf("type %d %.*s depth %d hash %#llx ancestors", index, (int)info->type_key.size,
         info->type_key.data, info->type_depth, (unsigned long long)info->type_key_hash);
  for (int d = 0; d < info->type_depth; ++d) printf(" %d", info->type_ancestors[d]->type_index);
  if (info->metadata) {
    printf(" metadata size %d kind %d creator %d\n", info->metadata->total_size,
           info->metadata->structural_eq_hash_kind, info->metadata->creator != NULL);
  } else {
    printf(" metadata none\n");
  }
}

static int getter(void* field, TVMFFIAny* result) {
  *result = any_int(*(int64_t*)field);
  return 0;
}

static int noop(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  *result = any_none();
  return 0;
}

int main(void) {
  static const char* keys[] = {"None", "int", "bool", "float", "void*", "DataType", "Device",
                               "DLTensor*", "const char*", "TVMFFIByteArray*", "ObjectRValueRef",
                               "ffi.SmallStr", "ffi.SmallBytes", "ffi.Unchanged", "ffi.Object",
                               "ffi.String", "ffi.Bytes", "ffi.Error", "ffi.Function",
                               "ffi.Shape", "ffi.Tensor", "ffi.Array", "ffi.Map", "ffi.Module",
                               "ffi.OpaquePyObject", "ffi.List", "ffi.Dict", "ffi.BigInt"};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); ++i) {
    TVMFFIByteArray k = byte_array(keys[i]);
    int32_t index = -100;
    CHECK_OK(TVMFFITypeKeyToIndex(&k, &index));
    show_info(index);
  }
  TVMFFIByteArray unknown = byte_array("test.NoSuchType");
  int32_t index;
  EXPECT_RAISES("unknown key", TVMFFITypeKeyToIndex(&unknown, &index));
  printf("query-only unknown -> %d\n", TVMFFITypeGetOrAllocIndex(&unknown, -1, 1, 0, 1, -2));

  /* Dynamic types: same key, same index; child slots come from the parent. */
  int32_t base = alloc("test.Base", 1, 3, 1, kTVMFFIObject);
  CHECK(base >= kTVMFFIDynObjectBegin);
  CHECK(alloc("test.Base", 1, 3, 1, kTVMFFIObject) == base);
  printf("query-only known -> same %d\n", TVMFFITypeGetOrAllocIndex(&(TVMFFIByteArray){"test.Base", 9}, -1, 1, 0, 1, -2) == base);
  int32_t child1 = alloc("test.Child1", 2, 0, 1, base);
  int32_t child2 = alloc("test.Child2", 2, 1, 1, base);
  int32_t child3 = alloc("test.Child3", 2, 0, 1, base);
  printf("children at base+%d, base+%d, overflow beyond base+3: %d\n", child1 - base, child2 - base,
         child3 > base + 3);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(child2);
  printf("child2 depth %d ancestors %d,%s\n", info->type_depth, info->type_ancestors[0]->type_index,
         info->type_ancestors[1]->type_index == base ? "base" : "other");
  /* Fields and methods are copied. */
  TVMFFIFieldInfo field;
  memset(&field, 0, sizeof(field));
  char name[8] = "value";
  field.name = byte_array(name);
  field.doc = byte_array("the value");
  field.flags = kTVMFFIFieldFlagBitMaskHasDefault;
  field.size = 8;
  field.alignment = 8;
  field.offset = 24;
  field.getter = getter;
  field.default_value_or_factory = any_int(5);
  field.field_static_type_index = kTVMFFIInt;
  CHECK_OK(TVMFFITypeRegisterField(base, &field));
  strcpy(name, "gone");
  EXPECT_RAISES("duplicate field", (field.name = byte_array("value"), TVMFFITypeRegisterField(base, &field)));
  info = TVMFFIGetTypeInfo(base);
  printf("fields %d: %.*s offset %lld default %lld\n", info->num_fields, (int)info->fields[0].name.size,
         info->fields[0].name.data, (long long)info->fields[0].offset,
         (long long)info->fields[0].default_value_or_factory.v_int64);
  TVMFFIObjectHandle method = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, noop, NULL, &method));
  TVMFFIMethodInfo minfo;
  memset(&minfo, 0, sizeof(minfo));
  minfo.name = byte_array("__init__");
  minfo.flags = kTVMFFIFieldFlagBitMaskIsStaticMethod;
  minfo.method.type_index = kTVMFFIFunction;
  minfo.method.v_obj = method;
  CHECK_OK(TVMFFITypeRegisterMethod(base, &minfo));
  TVMFFIObjectDecRef(method);
  info = TVMFFIGetTypeInfo(base);
  printf("methods %d: %.*s is function %d\n", info->num_methods, (int)info->methods[0].name.size,
         info->methods[0].name.data, info->methods[0].method.type_index == kTVMFFIFunction);
  TVMFFIAny mres = any_none();
  CHECK_OK(TVMFFIFunctionCall(info->methods[0].method.v_obj, NULL, 0, &mres));

  TVMFFITypeMetadata meta;
  memset(&meta, 0, sizeof(meta));
  meta.doc = byte_array("a test type");
  meta.total_size = 32;
  meta.structural_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  CHECK_OK(TVMFFITypeRegisterMetadata(base, &meta));
  EXPECT_RAISES("second metadata", TVMFFITypeRegisterMetadata(base, &meta));
  info = TVMFFIGetTypeInfo(base);
  printf("metadata size %d kind %d doc %.*s\n", info->metadata->total_size,
         info->metadata->structural_eq_hash_kind, (int)info->metadata->doc.size, info->metadata->doc.data);

  /* Attribute columns. */
  TVMFFIByteArray attr = byte_array("__test_attr__");
  CHECK(TVMFFIGetTypeAttrColumn(&attr) == NULL);
  TVMFFIAny none = any_none(), seven = any_int(7);
  CHECK_OK(TVMFFITypeRegisterAttr(kTVMFFINone, &attr, &none));
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&attr);
  CHECK(col != NULL);
  printf("declared column size %d\n", col->size);
  CHECK_OK(TVMFFITypeRegisterAttr(base, &attr, &seven));
  EXPECT_RAISES("attr set twice", TVMFFITypeRegisterAttr(base, &attr, &seven));
  printf("column size covers base %d, value %lld, begin %d, unset slot none %d\n",
         col->size > base, (long long)col->data[base - col->begin_index].v_int64, col->begin_index,
         col->data[kTVMFFIObject].type_index == kTVMFFINone);
  return 0;
}
