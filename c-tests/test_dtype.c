/* The dtype grammar: every string is parsed and printed back; the
 * transcript must match the official library's line for line. */
#include "common.h"

static const char* kStrings[] = {
    "int8", "int16", "int32", "int64", "int1", "int4", "int", "int0", "uint8", "uint16",
    "uint32", "uint64", "uint1", "uint", "float16", "float32", "float64", "float", "float8",
    "bfloat16", "bfloat", "bool", "bool8", "bool1", "boolx4", "handle", "handle32", "void", "",
    "i8", "i32", "u8", "u64", "f16", "f32", "f64", "bf16", "int32x4", "float32x8", "uint8x16",
    "float16x2", "int8x65535", "int8x65536", "int8x0", "int8x", "float32xvscalex4",
    "int32xvscalex8", "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu",
    "float8_e4m3fnx4", "float8_e5m2x2", "fp8_e4m3fn", "fp8_e5m2", "f8_e4m3fn", "f8_e5m2x4",
    "float6_e2m3fn", "float6_e3m2fn", "fp6_e2m3fn", "f6_e3m2fn", "float6_e2m3fnx8",
    "float4_e2m1fn", "fp4_e2m1fn", "f4_e2m1fn", "float4_e2m1fnx2", "float4_e2m1fn_x2",
    "float8_e9m9", "float6_e2m1fn", "float4_e3m2fn", "float8_", "int256", "int99999999999",
    "int8x99999999999", "custom", "custom[abc", "complex64", "string", "Int32", "int32 ",
    " int32", "float32x4x4", "handlex4", "bf", "f", "i", "u", "fp8", "float8_e4m3fnxvscalex2",
    "uint8xvscale", "int8xvscalex0", "internal", "floaty", "bfloat16x4", "bf16x2",
};

static void print_dtype(DLDataType d) {
  TVMFFIAny out = any_none();
  if (TVMFFIDataTypeToString(&d, &out) != 0) {
    char* kind = take_error_kind();
    printf("(%u,%u,%u) -> raises %s\n", d.code, d.bits, d.lanes, kind);
    free(kind);
    return;
  }
  TVMFFIByteArray text = any_text(&out);
  printf("(%u,%u,%u) -> '%.*s'\n", d.code, d.bits, d.lanes, (int)text.size, text.data);
  any_release(&out);
}

int main(void) {
  size_t n = sizeof(kStrings) / sizeof(kStrings[0]);
  for (size_t i = 0; i < n; ++i) {
    TVMFFIByteArray s = byte_array(kStrings[i]);
    DLDataType d;
    if (TVMFFIDataTypeFromString(&s, &d) != 0) {
      char* kind = take_error_kind();
      printf("'%s' -> raises %s\n", kStrings[i], kind);
      free(kind);
      continue;
    }
    printf("'%s' -> ", kStrings[i]);
    print_dtype(d);
  }
  /* Printing: special cases and codes the grammar never produces. */
  DLDataType cases[] = {{kDLBool, 8, 1}, {kDLBool, 8, 4}, {kDLBool, 1, 1}, {kDLOpaqueHandle, 0, 0},
                        {kDLOpaqueHandle, 32, 4}, {kDLFloat, 32, 0}, {kDLFloat, 32, 65535},
                        {kDLInt, 8, 65532}, {kDLComplex, 64, 1}, {kDLFloat8_e4m3fn, 8, 3},
                        {kDLFloat4_e2m1fn, 4, 1}, {18, 8, 1}, {100, 32, 1}, {kDLUInt, 0, 1}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) print_dtype(cases[i]);
  printf("%zu strings\n", n);
  return 0;
}
