//! Compile-time checks of every `#[repr(C)]` layout against the numbers of the
//! official header on 64-bit targets. `c-tests/test_layout.c` checks the same
//! numbers from C.
#![forbid(unsafe_code)]

use super::{any::*, cells::*, dlpack::*, object::*, type_info::*, version::*};
use core::mem::{align_of, offset_of, size_of};

#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<TVMFFIVersion>() == 12);
    assert!(size_of::<TVMFFIObject>() == 24 && align_of::<TVMFFIObject>() == 8);
    assert!(offset_of!(TVMFFIObject, combined_ref_count) == 0);
    assert!(offset_of!(TVMFFIObject, type_index) == 8);
    assert!(offset_of!(TVMFFIObject, __padding) == 12);
    assert!(offset_of!(TVMFFIObject, deleter) == 16);
    assert!(size_of::<TVMFFIAny>() == 16 && align_of::<TVMFFIAny>() == 8);
    assert!(offset_of!(TVMFFIAny, type_index) == 0);
    assert!(offset_of!(TVMFFIAny, small_str_len) == 4);
    assert!(offset_of!(TVMFFIAny, value) == 8);
    assert!(size_of::<TVMFFIAnyValue>() == 8);
    assert!(size_of::<TVMFFIByteArray>() == 16);
    assert!(offset_of!(TVMFFIByteArray, size) == 8);
    assert!(size_of::<TVMFFIShapeCell>() == 16);
    assert!(size_of::<TVMFFISeqCell>() == 32);
    assert!(offset_of!(TVMFFISeqCell, size) == 8);
    assert!(offset_of!(TVMFFISeqCell, capacity) == 16);
    assert!(offset_of!(TVMFFISeqCell, data_deleter) == 24);
    assert!(size_of::<TVMFFIErrorCell>() == 72);
    assert!(offset_of!(TVMFFIErrorCell, message) == 16);
    assert!(offset_of!(TVMFFIErrorCell, backtrace) == 32);
    assert!(offset_of!(TVMFFIErrorCell, update_backtrace) == 48);
    assert!(offset_of!(TVMFFIErrorCell, cause_chain) == 56);
    assert!(offset_of!(TVMFFIErrorCell, extra_context) == 64);
    assert!(size_of::<TVMFFIFunctionCell>() == 16);
    assert!(offset_of!(TVMFFIFunctionCell, cpp_call) == 8);
    assert!(size_of::<TVMFFIOpaqueObjectCell>() == 8);
    assert!(size_of::<TVMFFIObjectAllocHeader>() == 8);
    assert!(size_of::<TVMFFICustomAllocator>() == 16);
    assert!(offset_of!(TVMFFICustomAllocator, context) == 8);
    assert!(size_of::<TVMFFIFieldInfo>() == 120);
    assert!(offset_of!(TVMFFIFieldInfo, flags) == 48);
    assert!(offset_of!(TVMFFIFieldInfo, size) == 56);
    assert!(offset_of!(TVMFFIFieldInfo, alignment) == 64);
    assert!(offset_of!(TVMFFIFieldInfo, offset) == 72);
    assert!(offset_of!(TVMFFIFieldInfo, getter) == 80);
    assert!(offset_of!(TVMFFIFieldInfo, setter) == 88);
    assert!(offset_of!(TVMFFIFieldInfo, default_value_or_factory) == 96);
    assert!(offset_of!(TVMFFIFieldInfo, field_static_type_index) == 112);
    assert!(size_of::<TVMFFIMethodInfo>() == 72);
    assert!(offset_of!(TVMFFIMethodInfo, flags) == 48);
    assert!(offset_of!(TVMFFIMethodInfo, method) == 56);
    assert!(size_of::<TVMFFITypeMetadata>() == 32);
    assert!(offset_of!(TVMFFITypeMetadata, creator) == 16);
    assert!(offset_of!(TVMFFITypeMetadata, total_size) == 24);
    assert!(offset_of!(TVMFFITypeMetadata, structural_eq_hash_kind) == 28);
    assert!(size_of::<TVMFFITypeAttrColumn>() == 16);
    assert!(offset_of!(TVMFFITypeAttrColumn, size) == 8);
    assert!(offset_of!(TVMFFITypeAttrColumn, begin_index) == 12);
    assert!(size_of::<TVMFFITypeInfo>() == 72);
    assert!(offset_of!(TVMFFITypeInfo, type_depth) == 4);
    assert!(offset_of!(TVMFFITypeInfo, type_key) == 8);
    assert!(offset_of!(TVMFFITypeInfo, type_ancestors) == 24);
    assert!(offset_of!(TVMFFITypeInfo, type_key_hash) == 32);
    assert!(offset_of!(TVMFFITypeInfo, num_fields) == 40);
    assert!(offset_of!(TVMFFITypeInfo, num_methods) == 44);
    assert!(offset_of!(TVMFFITypeInfo, fields) == 48);
    assert!(offset_of!(TVMFFITypeInfo, methods) == 56);
    assert!(offset_of!(TVMFFITypeInfo, metadata) == 64);
    assert!(size_of::<DLPackVersion>() == 8);
    assert!(size_of::<DLDevice>() == 8);
    assert!(size_of::<DLDataType>() == 4);
    assert!(offset_of!(DLDataType, bits) == 1 && offset_of!(DLDataType, lanes) == 2);
    assert!(size_of::<DLTensor>() == 48);
    assert!(offset_of!(DLTensor, device) == 8);
    assert!(offset_of!(DLTensor, ndim) == 16);
    assert!(offset_of!(DLTensor, dtype) == 20);
    assert!(offset_of!(DLTensor, shape) == 24);
    assert!(offset_of!(DLTensor, strides) == 32);
    assert!(offset_of!(DLTensor, byte_offset) == 40);
    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == 48);
    assert!(offset_of!(DLManagedTensor, deleter) == 56);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 16);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 24);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
};

/// Our DLPack mirrors and dlpark's agree, so managed tensors pass between
/// tvm-ffi-rs and the dlpark ecosystem by pointer.
const _: () = {
    use dlpark::ffi as dl;
    assert!(size_of::<DLTensor>() == size_of::<dl::DLTensor>());
    assert!(offset_of!(DLTensor, shape) == offset_of!(dl::DLTensor, shape));
    assert!(offset_of!(DLTensor, strides) == offset_of!(dl::DLTensor, strides));
    assert!(offset_of!(DLTensor, byte_offset) == offset_of!(dl::DLTensor, byte_offset));
    assert!(size_of::<DLManagedTensorVersioned>() == size_of::<dl::DLManagedTensorVersioned>());
    assert!(
        offset_of!(DLManagedTensorVersioned, manager_ctx)
            == offset_of!(dl::DLManagedTensorVersioned, manager_ctx)
    );
    assert!(
        offset_of!(DLManagedTensorVersioned, deleter)
            == offset_of!(dl::DLManagedTensorVersioned, deleter)
    );
    assert!(
        offset_of!(DLManagedTensorVersioned, flags)
            == offset_of!(dl::DLManagedTensorVersioned, flags)
    );
    assert!(
        offset_of!(DLManagedTensorVersioned, dl_tensor)
            == offset_of!(dl::DLManagedTensorVersioned, dl_tensor)
    );
    assert!(size_of::<DLManagedTensor>() == size_of::<dl::DLManagedTensor>());
};
