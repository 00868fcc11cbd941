//! `TVMFFIDataTypeFromString` / `TVMFFIDataTypeToString`.

use super::args::{arg_bytes, arg_out, arg_ref, ffi_call};
use crate::abi::*;
use crate::runtime::value::dtype;
use core::ffi::c_int;

/// Parses a dtype string (`int32`, `float16x4`, `bfloat16`, `bool`,
/// `float8_e4m3fn`, `fp8_e5m2`, `i8`, `f32`, `handle`, `void`, ...).
/// Errors: ValueError naming the dtype for anything the grammar rejects.
///
/// # Safety
/// `str` is NULL or a valid byte array; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIDataTypeFromString(
    str: *const TVMFFIByteArray,
    out: *mut DLDataType,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (text, out) = unsafe { (arg_bytes(str, "str")?, arg_out(out, "out")?) };
        *out = dtype::from_string(text)?;
        Ok(())
    })
}

/// Formats a dtype as a String (`bool`, `float32x4`, `handle`; empty for void).
/// Ownership: `*out` receives an owned String value.
/// Errors: ValueError for an unknown type code.
///
/// # Safety
/// `dtype` is NULL or valid; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIDataTypeToString(
    dtype: *const DLDataType,
    out: *mut TVMFFIAny,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (value, out) = unsafe { (arg_ref(dtype, "dtype")?, arg_out(out, "out")?) };
        *out = crate::runtime::Any::from(dtype::to_string_object(*value)?).into_raw();
        Ok(())
    })
}
