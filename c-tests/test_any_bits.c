/* Every Any the library writes is bit-exact: for each POD kind (None, int,
 * bool, float, void*, DataType, Device) and each producing path (JSON graph
 * reading, JSON parsing, container reads, field getters, typed returns,
 * conversions of views), the raw 16 bytes of the result are printed. The
 * result slot is filled with 0xAB first, so a byte the library leaves
 * unwritten shows; C++ code compares the whole 64-bit value
 * (`v_uint64`), so these bytes are what a caller can observe. */
#include "common.h"

#include <stdint.h>

/* Prints the 16 raw bytes of `a`. */
static void bits(const char* label, const TVMFFIAny* a) {
  const unsigned char* p = (const unsigned char*)a;
  printf("%-44s", label);
  for (int i = 0; i < 16; ++i) printf("%s%02x", (i == 4 || i == 8) ? " " : "", p[i]);
  printf("\n");
}

static TVMFFIAny garbage(void) {
  TVMFFIAny a;
  memset(&a, 0xAB, sizeof(a));
  return a;
}

/* Calls global `name` into a garbage-filled slot; prints the result's bits
 * (POD) or its type index (objects, which are returned). */
static TVMFFIAny call_bits(const char* label, const char* name, TVMFFIAny* args, int n) {
  TVMFFIObjectHandle f = get_global(name);
  TVMFFIAny r = garbage();
  CHECK_OK(TVMFFIFunctionCall(f, args, n, &r));
  TVMFFIObjectDecRef(f);
  if (r.type_index < kTVMFFIStaticObjectBegin) bits(label, &r);
  return r;
}

static TVMFFIAny text(const char* s) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* Element i of an Array, through ffi.ArrayGetItem. */
static void element_bits(const char* label, TVMFFIAny array, int64_t i) {
  TVMFFIAny args[2] = {array, any_int(i)};
  TVMFFIAny r = call_bits(label, "ffi.ArrayGetItem", args, 2);
  any_release(&r);
}

int main(void) {
  /* 1. JSON graphs: a root of each POD kind, then an Array of them read
   *    back element by element (a container read). */
  const char* graphs[][2] = {
      {"graph None", "{\"root_index\":0,\"nodes\":[{\"type\":\"None\"}]}"},
      {"graph int", "{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":-7}]}"},
      {"graph bool", "{\"root_index\":0,\"nodes\":[{\"type\":\"bool\",\"data\":true}]}"},
      {"graph float", "{\"root_index\":0,\"nodes\":[{\"type\":\"float\",\"data\":2.5}]}"},
      {"graph DataType int32", "{\"root_index\":0,\"nodes\":[{\"type\":\"DataType\",\"data\":\"int32\"}]}"},
      {"graph DataType bfloat16x4",
       "{\"root_index\":0,\"nodes\":[{\"type\":\"DataType\",\"data\":\"bfloat16x4\"}]}"},
      {"graph DataType float8_e4m3fn",
       "{\"root_index\":0,\"nodes\":[{\"type\":\"DataType\",\"data\":\"float8_e4m3fn\"}]}"},
      {"graph DataType bool", "{\"root_index\":0,\"nodes\":[{\"type\":\"DataType\",\"data\":\"bool\"}]}"},
      {"graph Device", "{\"root_index\":0,\"nodes\":[{\"type\":\"Device\",\"data\":[2,3]}]}"},
  };
  for (size_t i = 0; i < sizeof(graphs) / sizeof(graphs[0]); ++i) {
    TVMFFIAny arg = text(graphs[i][1]);
    TVMFFIAny r = call_bits(graphs[i][0], "ffi.FromJSONGraphString", &arg, 1);
    any_release(&r);
  }
  TVMFFIAny arg = text(
      "{\"root_index\":5,\"nodes\":[{\"type\":\"int\",\"data\":1},{\"type\":\"bool\",\"data\":false},"
      "{\"type\":\"DataType\",\"data\":\"float16\"},{\"type\":\"Device\",\"data\":[1,0]},"
      "{\"type\":\"float\",\"data\":-0.5},{\"type\":\"ffi.Array\",\"data\":[0,1,2,3,4]}]}");
  TVMFFIAny array = call_bits("graph Array", "ffi.FromJSONGraphString", &arg, 1);
  CHECK(array.type_index == kTVMFFIArray);
  const char* labels[] = {"graph Array[0] int", "graph Array[1] bool", "graph Array[2] DataType",
                          "graph Array[3] Device", "graph Array[4] float"};
  for (int i = 0; i < 5; ++i) element_bits(labels[i], array, i);

  /* 2. JSON text: the scalars and an array of them. */
  const char* docs[][2] = {{"json true", "true"}, {"json null", "null"}, {"json int", "-12"},
                           {"json float", "1e3"}};
  for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); ++i) {
    TVMFFIAny a = text(docs[i][1]);
    TVMFFIAny r = call_bits(docs[i][0], "ffi.json.Parse", &a, 1);
    any_release(&r);
  }
  TVMFFIAny doc = text("[false, 3, 0.25, null]");
  TVMFFIAny parsed = call_bits("json array", "ffi.json.Parse", &doc, 1);
  CHECK(parsed.type_index == kTVMFFIArray);
  const char* json_labels[] = {"json [0] false", "json [1] int", "json [2] float", "json [3] null"};
  for (int i = 0; i < 4; ++i) element_bits(json_labels[i], parsed, i);
  any_release(&parsed);

  /* 3. A Map's values (a container read through ffi.MapGetItem). */
  TVMFFIAny map_args[4] = {text("dtype"), any_none(), text("device"), any_none()};
  TVMFFIAny get_args[2] = {array, any_int(2)};
  map_args[1] = call_global("ffi.ArrayGetItem", get_args, 2);
  get_args[1] = any_int(3);
  map_args[3] = call_global("ffi.ArrayGetItem", get_args, 2);
  TVMFFIAny map = call_global("ffi.Map", map_args, 4);
  TVMFFIAny key_args[2] = {map, text("dtype")};
  call_bits("Map[\"dtype\"]", "ffi.MapGetItem", key_args, 2);
  key_args[1] = text("device");
  call_bits("Map[\"device\"]", "ffi.MapGetItem", key_args, 2);
  any_release(&map);

  /* 4. Field getters (ffi.MakeFieldGetter) over fields whose neighbouring
   *    bytes are 0xCD. */
  struct {
    int32_t type_index;
    const char* label;
    unsigned char value[8];
    size_t size;
  } fields[] = {
      {kTVMFFIInt, "getter int", {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8},
      {kTVMFFIBool, "getter bool", {1}, 1},
      {kTVMFFIFloat, "getter float", {0, 0, 0, 0, 0, 0, 0xf8, 0x3f}, 8},
      {kTVMFFIOpaquePtr, "getter void*", {0x10, 0x32, 0x54, 0x76, 0, 0, 0, 0}, 8},
      {kTVMFFIDataType, "getter DataType float32x4", {kDLFloat, 32, 4, 0}, 4},
      {kTVMFFIDevice, "getter Device cuda:1", {kDLCUDA, 0, 0, 0, 1, 0, 0, 0}, 8},
  };
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); ++i) {
    TVMFFIAny index = any_int(fields[i].type_index);
    TVMFFIAny getter = call_global("ffi.MakeFieldGetter", &index, 1);
    CHECK(getter.type_index == kTVMFFIInt);
    int (*get)(void*, TVMFFIAny*) = (int (*)(void*, TVMFFIAny*))(intptr_t)getter.v_int64;
    _Alignas(8) unsigned char storage[16];
    memset(storage, 0xCD, sizeof(storage));
    memcpy(storage, fields[i].value, fields[i].size);
    TVMFFIAny r = garbage();
    CHECK(get(storage, &r) == 0);
    bits(fields[i].label, &r);
  }

  /* 5. Typed returns. */
  TVMFFIAny eq_args[4] = {any_int(1), any_int(1), any_none(), any_none()};
  eq_args[2].type_index = eq_args[3].type_index = kTVMFFIBool;
  call_bits("StructuralEqual -> bool", "ffi.StructuralEqual", eq_args, 4);
  call_bits("ArraySize -> int", "ffi.ArraySize", &array, 1);
  call_bits("ContainerFindFirstNonCPUDevice -> Device", "ffi.ContainerFindFirstNonCPUDevice", &array, 1);
  any_release(&array);

  /* 6. A borrowed view made owned: a DataType view whose upper bytes the
   *    caller left as 0xEE is copied as it is. */
  TVMFFIAny view;
  memset(&view, 0xEE, sizeof(view));
  view.type_index = kTVMFFIDataType;
  view.zero_padding = 0;
  view.v_dtype.code = kDLInt;
  view.v_dtype.bits = 8;
  view.v_dtype.lanes = 1;
  TVMFFIAny owned = garbage();
  CHECK_OK(TVMFFIAnyViewToOwnedAny(&view, &owned));
  bits("AnyViewToOwnedAny DataType (caller's bytes)", &owned);
  return 0;
}
