/* Sizes and offsets of every public type, as the official header lays them
 * out on 64-bit targets (the same numbers src/abi/layout.rs asserts). */
#include <stddef.h>
#include "common.h"

#define EXPECT_SIZE(T, n) _Static_assert(sizeof(T) == (n), "sizeof " #T)
#define EXPECT_OFFSET(T, f, n) _Static_assert(offsetof(T, f) == (n), "offsetof " #T "." #f)

EXPECT_SIZE(TVMFFIVersion, 12);
EXPECT_SIZE(TVMFFIObject, 24);
EXPECT_OFFSET(TVMFFIObject, combined_ref_count, 0);
EXPECT_OFFSET(TVMFFIObject, type_index, 8);
EXPECT_OFFSET(TVMFFIObject, deleter, 16);
EXPECT_SIZE(TVMFFIAny, 16);
EXPECT_OFFSET(TVMFFIAny, type_index, 0);
EXPECT_OFFSET(TVMFFIAny, zero_padding, 4);
EXPECT_OFFSET(TVMFFIAny, small_str_len, 4);
EXPECT_OFFSET(TVMFFIAny, v_int64, 8);
EXPECT_OFFSET(TVMFFIAny, v_float64, 8);
EXPECT_OFFSET(TVMFFIAny, v_ptr, 8);
EXPECT_OFFSET(TVMFFIAny, v_c_str, 8);
EXPECT_OFFSET(TVMFFIAny, v_obj, 8);
EXPECT_OFFSET(TVMFFIAny, v_dtype, 8);
EXPECT_OFFSET(TVMFFIAny, v_device, 8);
EXPECT_OFFSET(TVMFFIAny, v_bytes, 8);
EXPECT_OFFSET(TVMFFIAny, v_uint64, 8);
EXPECT_SIZE(TVMFFIByteArray, 16);
EXPECT_OFFSET(TVMFFIByteArray, size, 8);
EXPECT_SIZE(TVMFFIShapeCell, 16);
EXPECT_SIZE(TVMFFISeqCell, 32);
EXPECT_OFFSET(TVMFFISeqCell, size, 8);
EXPECT_OFFSET(TVMFFISeqCell, capacity, 16);
EXPECT_OFFSET(TVMFFISeqCell, data_deleter, 24);
EXPECT_SIZE(TVMFFIErrorCell, 72);
EXPECT_OFFSET(TVMFFIErrorCell, message, 16);
EXPECT_OFFSET(TVMFFIErrorCell, backtrace, 32);
EXPECT_OFFSET(TVMFFIErrorCell, update_backtrace, 48);
EXPECT_OFFSET(TVMFFIErrorCell, cause_chain, 56);
EXPECT_OFFSET(TVMFFIErrorCell, extra_context, 64);
EXPECT_SIZE(TVMFFIFunctionCell, 16);
EXPECT_OFFSET(TVMFFIFunctionCell, cpp_call, 8);
EXPECT_SIZE(TVMFFIOpaqueObjectCell, 8);
EXPECT_SIZE(TVMFFIObjectAllocHeader, 8);
EXPECT_SIZE(TVMFFICustomAllocator, 16);
EXPECT_OFFSET(TVMFFICustomAllocator, context, 8);
EXPECT_SIZE(TVMFFIFieldInfo, 120);
EXPECT_OFFSET(TVMFFIFieldInfo, flags, 48);
EXPECT_OFFSET(TVMFFIFieldInfo, size, 56);
EXPECT_OFFSET(TVMFFIFieldInfo, alignment, 64);
EXPECT_OFFSET(TVMFFIFieldInfo, offset, 72);
EXPECT_OFFSET(TVMFFIFieldInfo, getter, 80);
EXPECT_OFFSET(TVMFFIFieldInfo, setter, 88);
EXPECT_OFFSET(TVMFFIFieldInfo, default_value_or_factory, 96);
EXPECT_OFFSET(TVMFFIFieldInfo, field_static_type_index, 112);
EXPECT_SIZE(TVMFFIMethodInfo, 72);
EXPECT_OFFSET(TVMFFIMethodInfo, flags, 48);
EXPECT_OFFSET(TVMFFIMethodInfo, method, 56);
EXPECT_SIZE(TVMFFITypeMetadata, 32);
EXPECT_OFFSET(TVMFFITypeMetadata, creator, 16);
EXPECT_OFFSET(TVMFFITypeMetadata, total_size, 24);
EXPECT_OFFSET(TVMFFITypeMetadata, structural_eq_hash_kind, 28);
EXPECT_SIZE(TVMFFITypeAttrColumn, 16);
EXPECT_OFFSET(TVMFFITypeAttrColumn, size, 8);
EXPECT_OFFSET(TVMFFITypeAttrColumn, begin_index, 12);
EXPECT_SIZE(TVMFFITypeInfo, 72);
EXPECT_OFFSET(TVMFFITypeInfo, type_depth, 4);
EXPECT_OFFSET(TVMFFITypeInfo, type_key, 8);
EXPECT_OFFSET(TVMFFITypeInfo, type_ancestors, 24);
EXPECT_OFFSET(TVMFFITypeInfo, type_key_hash, 32);
EXPECT_OFFSET(TVMFFITypeInfo, num_fields, 40);
EXPECT_OFFSET(TVMFFITypeInfo, num_methods, 44);
EXPECT_OFFSET(TVMFFITypeInfo, fields, 48);
EXPECT_OFFSET(TVMFFITypeInfo, methods, 56);
EXPECT_OFFSET(TVMFFITypeInfo, metadata, 64);
EXPECT_SIZE(DLDevice, 8);
EXPECT_SIZE(DLDataType, 4);
EXPECT_SIZE(DLTensor, 48);
EXPECT_OFFSET(DLTensor, ndim, 16);
EXPECT_OFFSET(DLTensor, dtype, 20);
EXPECT_OFFSET(DLTensor, shape, 24);
EXPECT_OFFSET(DLTensor, strides, 32);
EXPECT_OFFSET(DLTensor, byte_offset, 40);
EXPECT_SIZE(DLManagedTensor, 64);
EXPECT_SIZE(DLManagedTensorVersioned, 80);
EXPECT_OFFSET(DLManagedTensorVersioned, flags, 24);
EXPECT_OFFSET(DLManagedTensorVersioned, dl_tensor, 32);

int main(void) {
  /* Enumerations: the values the official header gives. */
  CHECK(kTVMFFIAny == -1 && kTVMFFINone == 0 && kTVMFFIUnchanged == 13);
  CHECK(kTVMFFIObject == 64 && kTVMFFIStr == 65 && kTVMFFIBigInt == 78);
  CHECK(kTVMFFIStaticObjectEnd == 79 && kTVMFFIDynObjectBegin == 128);
  CHECK(kTVMFFIObjectDeleterFlagBitMaskBoth == 3);
  CHECK(kTVMFFIFieldFlagBitMaskSEqHashDefSimple == (1 << 12));
  CHECK(kTVMFFISEqHashKindUniqueInstance == 5 && kTVMFFIBacktraceUpdateModeAppend == 1);
  TVMFFIVersion v;
  TVMFFIGetVersion(&v);
  printf("version %u.%u.%u\n", v.major, v.minor, v.patch);
  CHECK(v.major == TVM_FFI_VERSION_MAJOR && v.minor == TVM_FFI_VERSION_MINOR &&
        v.patch == TVM_FFI_VERSION_PATCH);
  return 0;
}
