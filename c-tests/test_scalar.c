/* BigInt normalisation and content, and Shape objects. */
#include "common.h"

static void big(const char* label, const int64_t* words, size_t n) {
  TVMFFIByteArray in = {(const char*)words, n * 8};
  TVMFFIAny out = any_none();
  CHECK_OK(TVMFFIBigIntFromByteArray(&in, &out));
  TVMFFIByteArray content = TVMFFIBigIntGetContentByteArray(&out);
  printf("%s: type_index %d words %zu:", label, out.type_index, content.size / 8);
  for (size_t i = 0; i < content.size / 8; ++i) printf(" %lld", (long long)((const int64_t*)content.data)[i]);
  printf("\n");
  any_release(&out);
}

int main(void) {
  int64_t zero[1] = {0}, neg[2] = {-5, -1}, pos[2] = {5, 0}, two[2] = {0, 1}, three[3] = {7, -1, -1},
          wide[3] = {1, 2, 3}, negwide[2] = {0, -2}, maxpos[2] = {-1, 0};
  big("empty", zero, 0);
  big("zero", zero, 1);
  big("-5 with sign word", neg, 2);
  big("5 with zero word", pos, 2);
  big("2^64", two, 2);
  big("7 with two sign words", three, 3);
  big("three words", wide, 3);
  big("-2^65", negwide, 2);
  big("2^64-1", maxpos, 2);
  TVMFFIByteArray odd = {"abc", 3};
  TVMFFIAny out = any_none();
  EXPECT_RAISES("BigInt from 3 bytes", TVMFFIBigIntFromByteArray(&odd, &out));

  TVMFFIObjectHandle fshape = get_global("ffi.Shape");
  TVMFFIAny dims[3] = {any_int(2), any_int(3), any_int(4)};
  CHECK_OK(TVMFFIFunctionCall(fshape, dims, 3, &out));
  const TVMFFIShapeCell* cell = (const TVMFFIShapeCell*)((char*)out.v_obj + sizeof(TVMFFIObject));
  printf("shape type_index %d size %zu dims %lld %lld %lld in place %d\n", out.type_index, cell->size,
         (long long)cell->data[0], (long long)cell->data[1], (long long)cell->data[2],
         (const char*)cell->data == (const char*)out.v_obj + sizeof(TVMFFIObject) + sizeof(TVMFFIShapeCell));
  any_release(&out);
  CHECK_OK(TVMFFIFunctionCall(fshape, NULL, 0, &out));
  printf("empty shape size %zu\n", ((const TVMFFIShapeCell*)((char*)out.v_obj + sizeof(TVMFFIObject)))->size);
  any_release(&out);
  TVMFFIAny bad = any_none();
  EXPECT_RAISES("ffi.Shape(None)", TVMFFIFunctionCall(fshape, &bad, 1, &out));
  TVMFFIObjectDecRef(fshape);
  return 0;
}
