/* Strings and bytes: the small-string rule, heap layout, NULs, non-UTF-8. */
#include "common.h"

static void show(const char* label, const char* data, size_t n, int bytes) {
  TVMFFIByteArray in = {data, n};
  TVMFFIAny out = any_none();
  CHECK_OK(bytes ? TVMFFIBytesFromByteArray(&in, &out) : TVMFFIStringFromByteArray(&in, &out));
  TVMFFIByteArray text = any_text(&out);
  CHECK(text.size == n && memcmp(text.data, data, n) == 0);
  printf("%s: len %zu type_index %d", label, n, out.type_index);
  if (out.type_index == kTVMFFISmallStr || out.type_index == kTVMFFISmallBytes) {
    /* Unused bytes are zero, so raw comparison and hashing work. */
    for (size_t i = n; i < 8; ++i) CHECK(out.v_bytes[i] == 0);
    printf(" small_str_len %u\n", out.small_str_len);
  } else {
    TVMFFIObject* obj = out.v_obj;
    const TVMFFIByteArray* cell = (const TVMFFIByteArray*)((char*)obj + sizeof(TVMFFIObject));
    /* Library-made heap strings keep their bytes in place, NUL-terminated. */
    CHECK(cell->data == (const char*)obj + sizeof(TVMFFIObject) + sizeof(TVMFFIByteArray));
    CHECK(cell->data[n] == 0);
    printf(" object type_index %d ref_count %#llx\n", obj->type_index,
           (unsigned long long)obj->combined_ref_count);
  }
  any_release(&out);
}

int main(void) {
  show("empty str", "", 0, 0);
  show("7-byte str", "abcdefg", 7, 0);
  show("8-byte str", "abcdefgh", 8, 0);
  show("64-byte str", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 64, 0);
  show("embedded NUL str", "ab\0cd\0efghij", 12, 0);
  show("non-UTF-8 str", "\xff\xfe\x80", 3, 0);
  show("small bytes", "\x01\x00\x02", 3, 1);
  show("long bytes", "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09", 10, 1);
  /* ffi.String and ffi.Bytes return the canonical form. */
  TVMFFIObjectHandle fstr = get_global("ffi.String");
  TVMFFIAny args[1];
  const char* raw = "a raw C string";
  args[0] = any_none();
  args[0].type_index = kTVMFFIRawStr;
  args[0].v_c_str = raw;
  TVMFFIAny result = any_none();
  CHECK_OK(TVMFFIFunctionCall(fstr, args, 1, &result));
  TVMFFIByteArray text = any_text(&result);
  printf("ffi.String(raw) -> type_index %d %.*s\n", result.type_index, (int)text.size, text.data);
  any_release(&result);
  TVMFFIObjectDecRef(fstr);
  TVMFFIObjectHandle fbytes = get_global("ffi.Bytes");
  TVMFFIByteArray arr = {"xy\0z", 4};
  args[0] = any_none();
  args[0].type_index = kTVMFFIByteArrayPtr;
  args[0].v_ptr = &arr;
  CHECK_OK(TVMFFIFunctionCall(fbytes, args, 1, &result));
  text = any_text(&result);
  printf("ffi.Bytes(bytearray) -> type_index %d len %zu\n", result.type_index, text.size);
  CHECK(text.size == 4 && memcmp(text.data, "xy\0z", 4) == 0);
  any_release(&result);
  /* A typed String parameter does not take an r-value reference. */
  TVMFFIByteArray long_text = byte_array("a string passed by r-value reference");
  TVMFFIAny owned = any_none();
  CHECK_OK(TVMFFIStringFromByteArray(&long_text, &owned));
  TVMFFIObject* slot = owned.v_obj;
  TVMFFIObjectHandle fstr2 = get_global("ffi.String");
  args[0] = any_none();
  args[0].type_index = kTVMFFIObjectRValueRef;
  args[0].v_ptr = &slot;
  EXPECT_RAISES("ffi.String(rvalue ref)", TVMFFIFunctionCall(fstr2, args, 1, &result));
  printf("slot kept: %s\n", slot != NULL ? "yes" : "no");
  if (slot != NULL) TVMFFIObjectDecRef(slot);
  TVMFFIObjectDecRef(fstr2);
  args[0] = any_int(3);
  EXPECT_RAISES("ffi.Bytes(int)", TVMFFIFunctionCall(fbytes, args, 1, &result));
  TVMFFIObjectDecRef(fbytes);
  return 0;
}
