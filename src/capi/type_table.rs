//! `TVMFFIType*`, `TVMFFIGetTypeInfo`, `TVMFFIGetTypeAttrColumn`.

use super::args::{arg_bytes, arg_out, arg_ref, ffi_call};
use crate::abi::*;
use crate::runtime::{AnyView, model::type_table};
use core::ffi::c_int;

/// Finds the type index of a type key.
/// Errors: ValueError "Cannot find type `key`" for unknown keys or NULL arguments.
///
/// # Safety
/// `type_key` is NULL or a valid byte array; `out_tindex` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITypeKeyToIndex(
    type_key: *const TVMFFIByteArray,
    out_tindex: *mut i32,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (key, out) = unsafe {
            (
                arg_bytes(type_key, "type_key")?,
                arg_out(out_tindex, "out_tindex")?,
            )
        };
        *out = type_table::key_to_index(key)?;
        Ok(())
    })
}

/// Returns the index of `type_key`, allocating one if it is new: the static
/// index if given (>= 0), else a slot reserved by the parent, else (if the
/// parent allows overflow) the next dynamic index from 128. A parent of -2
/// only queries (-2 if absent). `type_depth` must be the parent's depth + 1.
/// Returns -1 with the error raised on failure.
///
/// # Safety
/// `type_key` is NULL or a valid byte array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITypeGetOrAllocIndex(
    type_key: *const TVMFFIByteArray,
    static_type_index: i32,
    type_depth: i32,
    num_child_slots: i32,
    child_slots_can_overflow: i32,
    parent_type_index: i32,
) -> i32 {
    let mut index = -1;
    ffi_call(|| {
        // SAFETY: per the contract.
        let key = unsafe { arg_bytes(type_key, "type_key") }?;
        index = type_table::get_or_alloc_index(
            key,
            static_type_index,
            type_depth,
            num_child_slots,
            child_slots_can_overflow != 0,
            parent_type_index,
        )?;
        Ok(())
    });
    index
}

/// The information of a type, valid for the rest of the process.
/// Returns NULL with a ValueError raised for an unknown index.
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIGetTypeInfo(type_index: i32) -> *const TVMFFITypeInfo {
    let mut info = core::ptr::null();
    ffi_call(|| {
        info = type_table::type_info(type_index)?;
        Ok(())
    });
    info
}

/// Registers a reflected field of a type. Strings and the default value are
/// copied and kept for the rest of the process.
/// Errors: ValueError for an unknown type, a duplicate field name or NULL `info`.
///
/// # Safety
/// `info` is NULL or a valid record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITypeRegisterField(
    type_index: i32,
    info: *const TVMFFIFieldInfo,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract (a valid struct, as register_field needs).
        unsafe { type_table::register_field(type_index, arg_ref(info, "info")?) }
    })
}

/// Registers a reflected method of a type. Strings and the method are copied
/// and kept for the rest of the process.
/// Errors: ValueError for an unknown type or NULL `info`.
///
/// # Safety
/// `info` is NULL or a valid record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITypeRegisterMethod(
    type_index: i32,
    info: *const TVMFFIMethodInfo,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract (a valid struct, as register_method needs).
        unsafe { type_table::register_method(type_index, arg_ref(info, "info")?) }
    })
}

/// Registers the metadata of a type (once per type).
/// Errors: RuntimeError when the type already has metadata; ValueError for
/// an unknown type or NULL `metadata`.
///
/// # Safety
/// `metadata` is NULL or a valid record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITypeRegisterMetadata(
    type_index: i32,
    metadata: *const TVMFFITypeMetadata,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract (a valid struct, as register_metadata needs).
        unsafe { type_table::register_metadata(type_index, arg_ref(metadata, "metadata")?) }
    })
}

/// Sets the attribute `attr_name` of a type. Type index 0 (None) only
/// creates the column. Errors: RuntimeError when the slot is already set;
/// ValueError for an invalid type index or NULL arguments.
///
/// # Safety
/// `attr_name` is NULL or a valid byte array; `attr_value` is NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITypeRegisterAttr(
    type_index: i32,
    attr_name: *const TVMFFIByteArray,
    attr_value: *const TVMFFIAny,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (name, value) = unsafe {
            (
                arg_bytes(attr_name, "attr_name")?,
                arg_ref(attr_value, "attr_value")?,
            )
        };
        // SAFETY: the value is valid per the contract.
        type_table::register_attr(type_index, name, unsafe { AnyView::from_raw(value) })
    })
}

/// The column of a type attribute, valid for the rest of the process
/// (its `data` may move when more types are registered), or NULL if no such
/// attribute exists (or `attr_name` is NULL, with a ValueError raised).
///
/// # Safety
/// `attr_name` is NULL or a valid byte array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIGetTypeAttrColumn(
    attr_name: *const TVMFFIByteArray,
) -> *const TVMFFITypeAttrColumn {
    let mut column = core::ptr::null();
    ffi_call(|| {
        // SAFETY: per the contract.
        column = type_table::attr_column(unsafe { arg_bytes(attr_name, "attr_name") }?);
        Ok(())
    });
    column
}
