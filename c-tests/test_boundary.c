/* Bad input to every entry point gets a clear error, never a crash: NULL
 * pointers, NULL data with a nonzero size, NULL callbacks. (The official
 * library dereferences such pointers, so this test runs on ours only.) */
#include <sys/mman.h>

#include "common.h"

/* Returns the handle it was called with, as an opaque pointer. */
static int return_handle(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n;
  result->type_index = kTVMFFIOpaquePtr;
  result->zero_padding = 0;
  result->v_ptr = handle;
  return 0;
}

/* C callees that fail and raise nothing: `*self` is the code they answer. */
static int fail_without_raising(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n; (void)result;
  return *(int*)self;
}
static int init_fails_without_raising(void** result) {
  (void)result;
  return -1;
}
static int init_answers_minus_two(void** result) {
  (void)result;
  return -2;
}
static int deinit_fails_without_raising(void* handle) {
  (void)handle;
  return -1;
}

/* Prints what a fetch finds now: NULL, or the error's kind and message. */
static void print_fetch(const char* label, int rc) {
  char* text = take_error_kind();
  printf("%s: rc %d, fetch: %s\n", label, rc, text ? text : "NULL");
  free(text);
}

/* Where a C callee answers a failure and raises nothing, ours raises a
 * RuntimeError as the call returns, so the caller's fetch finds an error;
 * the reference leaves the slot empty and its fetch writes NULL, which its
 * Python package and C++ headers wrap and crash on. -2 (the frontend holds
 * its error) passes untouched on both. */
static void failures_without_raising(void) {
  int codes[] = {-1, -2, 5};
  for (int i = 0; i < 3; ++i) {
    TVMFFIObjectHandle f = NULL;
    TVMFFIAny r = any_none();
    CHECK_OK(TVMFFIFunctionCreate(&codes[i], fail_without_raising, NULL, &f));
    char label[64];
    snprintf(label, sizeof(label), "C callee answering %d, raising nothing", codes[i]);
    print_fetch(label, TVMFFIFunctionCall(f, NULL, 0, &r));
    /* C++ callers (the official headers) call the cell's safe_call directly. */
    const TVMFFIFunctionCell* cell = (const TVMFFIFunctionCell*)((const char*)f + sizeof(TVMFFIObject));
    snprintf(label, sizeof(label), "the same through its safe_call");
    print_fetch(label, cell->safe_call(f, NULL, 0, &r));
    TVMFFIObjectDecRef(f);
  }
  void* handle = NULL;
  print_fetch("HandleInitOnce, init answering -1 raising nothing",
              TVMFFIHandleInitOnce(&handle, init_fails_without_raising));
  print_fetch("HandleInitOnce, init answering -2", TVMFFIHandleInitOnce(&handle, init_answers_minus_two));
  handle = (void*)&handle;
  print_fetch("HandleDeinitOnce, deinit answering -1 raising nothing",
              TVMFFIHandleDeinitOnce(&handle, deinit_fails_without_raising));
}

int main(void) {
  TVMFFIAny any = any_none();
  TVMFFIObjectHandle h = NULL;
  TVMFFIByteArray bad = {NULL, 5}, name = byte_array("x");
  int32_t index;
  failures_without_raising();
  EXPECT_RAISES("IncRef(NULL)", TVMFFIObjectIncRef(NULL));
  CHECK(TVMFFIObjectDecRef(NULL) == 0); /* a no-op, as in the reference */
  printf("DecRef(NULL): 0\n");
  EXPECT_RAISES("CreateOpaque out NULL", TVMFFIObjectCreateOpaque(NULL, kTVMFFIOpaquePyObject, NULL, NULL));
  EXPECT_RAISES("StringFromByteArray(NULL)", TVMFFIStringFromByteArray(NULL, &any));
  EXPECT_RAISES("StringFromByteArray(NULL data, 5)", TVMFFIStringFromByteArray(&bad, &any));
  EXPECT_RAISES("BytesFromByteArray out NULL", TVMFFIBytesFromByteArray(&name, NULL));
  EXPECT_RAISES("FunctionCreate(NULL safe_call)", TVMFFIFunctionCreate(NULL, NULL, NULL, &h));
  EXPECT_RAISES("FunctionCall(NULL)", TVMFFIFunctionCall(NULL, NULL, 0, &any));
  TVMFFIAny not_a_function = any_none();
  TVMFFIByteArray long_text = byte_array("a string, not a function");
  CHECK_OK(TVMFFIStringFromByteArray(&long_text, &not_a_function));
  EXPECT_RAISES("FunctionCall(a String)", TVMFFIFunctionCall(not_a_function.v_obj, NULL, 0, &any));
  any_release(&not_a_function);
  /* A Function cell built outside the library (as C++ code compiled with the
   * official headers builds one) is called through its safe_call. Its
   * safe_call must be set: every creator sets it and FunctionCreate refuses
   * NULL, so the call path no longer tests it (the checked call is the NULL
   * test, the type compare and the jump). */
  struct {
    TVMFFIObject header;
    TVMFFIFunctionCell cell;
  } forged;
  memset(&forged, 0, sizeof(forged));
  forged.header.combined_ref_count = 1;
  forged.header.type_index = kTVMFFIFunction;
  forged.cell.safe_call = return_handle;
  CHECK_OK(TVMFFIFunctionCall(&forged, NULL, 0, &any));
  CHECK(any.type_index == kTVMFFIOpaquePtr && any.v_ptr == (void*)&forged);
  printf("FunctionCall(foreign cell): the callee got its own handle\n");
  any = any_none();
  EXPECT_RAISES("GetGlobal(NULL name)", TVMFFIFunctionGetGlobal(NULL, &h));
  EXPECT_RAISES("SetGlobal(NULL f)", TVMFFIFunctionSetGlobal(&name, NULL, 0));
  EXPECT_RAISES("SetGlobalFromMethodInfo(NULL)", TVMFFIFunctionSetGlobalFromMethodInfo(NULL, 0));
  EXPECT_RAISES("AnyViewToOwnedAny(NULL)", TVMFFIAnyViewToOwnedAny(NULL, &any));
  TVMFFIAny rref = any_none();
  rref.type_index = kTVMFFIObjectRValueRef;
  TVMFFIObject* empty_slot = NULL;
  rref.v_ptr = &empty_slot;
  EXPECT_RAISES("AnyViewToOwnedAny(moved-from rvalue)", TVMFFIAnyViewToOwnedAny(&rref, &any));
  EXPECT_RAISES("ErrorCreate(NULL kind)", TVMFFIErrorCreate(NULL, &name, &name, &h));
  EXPECT_RAISES("TypeKeyToIndex(NULL)", TVMFFITypeKeyToIndex(NULL, &index));
  CHECK(TVMFFITypeGetOrAllocIndex(NULL, -1, 1, 0, 1, kTVMFFIObject) == -1);
  free(take_error_kind());
  CHECK(TVMFFIGetTypeInfo(-7) == NULL && TVMFFIGetTypeInfo(1 << 30) == NULL);
  free(take_error_kind());
  EXPECT_RAISES("RegisterField(NULL)", TVMFFITypeRegisterField(kTVMFFIObject, NULL));
  TVMFFIFieldInfo unread;
  memset(&unread, 0xAB, sizeof(unread)); /* the type is refused before the info is read */
  EXPECT_RAISES("RegisterField(bad type)", TVMFFITypeRegisterField(5000, &unread));
  EXPECT_RAISES("RegisterAttr(bad type)", TVMFFITypeRegisterAttr(-3, &name, &any));
  CHECK(TVMFFIGetTypeAttrColumn(NULL) == NULL);
  free(take_error_kind());
  EXPECT_RAISES("HandleInitOnce(NULL)", TVMFFIHandleInitOnce(NULL, NULL));
  EXPECT_RAISES("EnvRegisterCAPI(NULL)", TVMFFIEnvRegisterCAPI(NULL, NULL));
  /* A child of a full, non-overflowing parent is an error (the official
   * library aborts the process here). */
  TVMFFIByteArray closed = byte_array("test.boundary.Closed"), child = byte_array("test.boundary.Child");
  int32_t parent = TVMFFITypeGetOrAllocIndex(&closed, -1, 1, 0, 0, kTVMFFIObject);
  CHECK(parent >= kTVMFFIDynObjectBegin);
  CHECK(TVMFFITypeGetOrAllocIndex(&child, -1, 2, 0, 1, parent) == -1);
  char* full = take_error_kind();
  printf("child of a full parent: raises %s\n", full);
  free(full);
  /* A wrong depth is an error too. */
  CHECK(TVMFFITypeGetOrAllocIndex(&child, -1, 5, 0, 1, kTVMFFIObject) == -1);
  free(take_error_kind());
  /* ErrorSetRaised(NULL) raises a ValueError instead of crashing. */
  TVMFFIErrorSetRaised(NULL);
  char* kind = take_error_kind();
  printf("ErrorSetRaised(NULL): raises %s\n", kind);
  free(kind);
  /* A wrong argument count or type to a built-in is a TypeError. */
  TVMFFIObjectHandle fstr = get_global("ffi.String");
  EXPECT_RAISES("ffi.String()", TVMFFIFunctionCall(fstr, NULL, 0, &any));
  TVMFFIAny arg = any_int(1);
  EXPECT_RAISES("ffi.String(1)", TVMFFIFunctionCall(fstr, &arg, 1, &any));
  EXPECT_RAISES("ffi.String(NULL result)", TVMFFIFunctionCall(fstr, &arg, 1, NULL));
  TVMFFIObjectDecRef(fstr);

  /* Reflection globals where the reference aborts or writes out of bounds. */
  TVMFFIObjectHandle init = get_global("ffi._RegisterFFIInit");
  TVMFFIAny unknown_type = any_int(99999);
  EXPECT_RAISES("_RegisterFFIInit(unknown type)", TVMFFIFunctionCall(init, &unknown_type, 1, &any));
  TVMFFIObjectDecRef(init);
  /* A Python-defined type whose field lies beyond its declared size. */
  TVMFFIByteArray hostile = byte_array("test.boundary.Hostile");
  int32_t hostile_index = TVMFFITypeGetOrAllocIndex(&hostile, -1, 1, 0, 1, kTVMFFIObject);
  CHECK(hostile_index >= kTVMFFIDynObjectBegin);
  TVMFFIFieldInfo field;
  memset(&field, 0, sizeof(field));
  field.name = byte_array("far");
  field.size = 8;
  field.alignment = 8;
  field.offset = 4096;
  field.field_static_type_index = kTVMFFIInt;
  CHECK_OK(TVMFFITypeRegisterField(hostile_index, &field));
  TVMFFIObjectHandle columns = get_global("ffi._PyClassRegisterTypeAttrColumns");
  TVMFFIAny cargs[2] = {any_int(hostile_index), any_int(32)};
  EXPECT_RAISES("_PyClassRegisterTypeAttrColumns(field beyond total_size)",
                TVMFFIFunctionCall(columns, cargs, 2, &any));
  TVMFFIObjectDecRef(columns);

  /* Hostile sizes and shapes found by a random sweep over the globals. */
  TVMFFIAny list = call_global("ffi.List", NULL, 0);
  TVMFFIAny reserve_args[2] = {list, any_int((int64_t)1 << 62)};
  TVMFFIObjectHandle freserve = get_global("ffi.ListReserve");
  EXPECT_RAISES("ListReserve(2^62)", TVMFFIFunctionCall(freserve, reserve_args, 2, &any));
  TVMFFIObjectDecRef(freserve);
  /* A Dict that contains itself: the device search terminates. */
  TVMFFIAny dict = call_global("ffi.Dict", NULL, 0);
  TVMFFIAny set_args[3] = {dict, any_int(1), dict};
  TVMFFIAny none = call_global("ffi.DictSetItem", set_args, 3);
  TVMFFIAny dev = call_global("ffi.ContainerFindFirstNonCPUDevice", &dict, 1);
  printf("first non-CPU device of a self-containing Dict: type %d device_type %d\n",
         dev.type_index, dev.v_device.device_type);
  TVMFFIAny erase_args[2] = {dict, any_int(1)};
  none = call_global("ffi.DictErase", erase_args, 2); /* break the cycle */
  TVMFFIAny indent_args[2] = {list, any_int(1 << 30)};
  TVMFFIObjectHandle fstringify = get_global("ffi.json.Stringify");
  EXPECT_RAISES("json.Stringify(indent 2^30)", TVMFFIFunctionCall(fstringify, indent_args, 2, &any));
  TVMFFIObjectDecRef(fstringify);
  any_release(&none);
  any_release(&dict);
  any_release(&list);
  /* The input may lie in *out itself: its bytes are read before *out is
   * written (16 bytes: a heap string; 5 bytes: a small one). The official
   * library clears *out first and copies the cleared bytes. */
  const size_t sizes[2] = {16, 5};
  for (int k = 0; k < 2; ++k) {
    size_t n = sizes[k];
    TVMFFIAny inside = any_int(0x6867666564636261LL); /* "abcdefgh" */
    unsigned char before[16];
    memcpy(before, &inside, sizeof(before));
    TVMFFIByteArray self_bytes = {(const char*)&inside, n};
    CHECK_OK(TVMFFIStringFromByteArray(&self_bytes, &inside));
    TVMFFIByteArray text = any_text(&inside);
    CHECK(text.size == n && memcmp(text.data, before, n) == 0);
    printf("str from bytes inside its own result (%zu bytes): type_index %d, bytes kept\n", n,
           inside.type_index);
    any_release(&inside);
  }
  /* The built-in depth-1 types have no child slots and cannot overflow:
   * registering a subclass fails. The reference logs the check and exits
   * the process; ours returns -1 with the error raised. */
  const char* builtins[] = {"ffi.String", "ffi.Bytes", "ffi.Error", "ffi.Function", "ffi.Shape",
                            "ffi.Tensor", "ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict",
                            "ffi.Module", "ffi.BigInt", "ffi.OpaquePyObject"};
  for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); ++i) {
    TVMFFIByteArray parent_key = byte_array(builtins[i]);
    int32_t parent = -1;
    CHECK_OK(TVMFFITypeKeyToIndex(&parent_key, &parent));
    char key[96];
    snprintf(key, sizeof(key), "boundary.SubclassOf.%s", builtins[i]);
    TVMFFIByteArray k = byte_array(key);
    int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, 2, 0, 1, parent);
    CHECK(index == -1);
    EXPECT_RAISES(key, -1);
  }
  /* Sizes the caller chose that memory cannot hold are errors, not aborts
   * (the reference raises InternalError: std::bad_alloc for the first two
   * and crashes on the third). */
  {
    static char few[8];
    TVMFFIByteArray huge = {few, (size_t)1 << 40};
    TVMFFIAny text = any_none();
    EXPECT_RAISES("Bytes of 2^40 bytes", TVMFFIBytesFromByteArray(&huge, &text));
    EXPECT_RAISES("String of 2^40 bytes", TVMFFIStringFromByteArray(&huge, &text));
    CHECK(text.type_index == kTVMFFINone);
    int64_t one_dim[1] = {2};
    DLManagedTensor managed;
    memset(&managed, 0, sizeof(managed));
    managed.dl_tensor = cpu_f32_tensor(few, 0x7fffffff, one_dim);
    TVMFFIObjectHandle tensor = NULL;
    EXPECT_RAISES("DLPack import of ndim 2^31-1", TVMFFITensorFromDLPack(&managed, 0, 0, &tensor));
    CHECK(tensor == NULL);
    /* A constant of 2^38 float32s (1 TiB, over a mapping that reserves
     * nothing): making its artifact needs a 1 TiB blob, a MemoryError. */
    void* terabyte = mmap(NULL, (size_t)1 << 40, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (terabyte == MAP_FAILED) {
      printf("a 1 TiB constant: cannot map 1 TiB here, skipped\n");
    } else {
      int64_t elems[1] = {(int64_t)1 << 38};
      managed.dl_tensor.data = terabyte;
      managed.dl_tensor.ndim = 1;
      managed.dl_tensor.shape = elems;
      CHECK_OK(TVMFFITensorFromDLPack(&managed, 0, 0, &tensor));
      TVMFFIAny map_args[2] = {any_str("w"), any_none()};
      map_args[1].type_index = kTVMFFITensor;
      map_args[1].v_obj = (TVMFFIObject*)tensor;
      TVMFFIAny map = call_global("ffi.Map", map_args, 2);
      TVMFFIAny args[3] = {any_str("c"), any_str("consts.bin"), map};
      TVMFFIObjectHandle make = get_global("ffi.ArtifactFromConstants");
      TVMFFIAny out = any_none();
      EXPECT_RAISES("a 1 TiB constant's artifact", TVMFFIFunctionCall(make, args, 3, &out));
      TVMFFIObjectDecRef(make);
      for (int i = 0; i < 2; ++i) any_release(&args[i]);
      any_release(&map_args[0]);
      any_release(&map);
      TVMFFIObjectDecRef(tensor);
      munmap(terabyte, (size_t)1 << 40);
    }
  }
  /* A hostile number of child slots is refused, not allocated. */
  TVMFFIByteArray huge = byte_array("boundary.HugeSlots");
  CHECK(TVMFFITypeGetOrAllocIndex(&huge, -1, 1, 0x7ffffff0, 1, kTVMFFIObject) == -1);
  EXPECT_RAISES("2^31 child slots", -1);
  return 0;
}
