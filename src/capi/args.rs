//! The argument checks and the call wrapper every entry point uses.

use crate::abi::{TVMFFIByteArray, TVMFFIObject};
use crate::runtime::{Error, Result};
use core::ffi::{CStr, c_char, c_int};
use core::ptr::NonNull;

/// Runs an entry point body: 0 on success, -1 (or -2) with the error raised
/// (the protocol of [`crate::runtime::model::boundary`]).
#[inline]
pub(super) fn ffi_call(f: impl FnOnce() -> Result<()>) -> c_int {
    crate::runtime::model::boundary::catch_to_code(f)
}

/// Runs the body of an entry point that returns a value rather than a code
/// (void, a pointer): a panic raises an `InternalError` and gives `fallback`.
#[inline]
pub(super) fn ffi_call_or<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    crate::runtime::model::boundary::catch_or(fallback, f)
}

/// The error for a NULL argument `name` (out of line: hot paths only
/// branch to it).
#[cold]
#[inline(never)]
pub(super) fn null_arg(name: &str) -> Error {
    Error::value(format!("`{name}` is NULL"))
}

/// Raises the error for a NULL argument `name`, out of the hot path.
#[cold]
#[inline(never)]
pub(super) fn raise_null(name: &str) -> c_int {
    crate::runtime::model::boundary::raise_code(null_arg(name))
}

/// A required pointer argument as a reference.
///
/// # Safety
/// `p` is NULL or valid for reads as `T` for `'a`.
pub(super) unsafe fn arg_ref<'a, T>(p: *const T, name: &str) -> Result<&'a T> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| null_arg(name))
}

/// A required out-pointer argument.
///
/// # Safety
/// `p` is NULL or valid for writes as `T` for `'a`.
pub(super) unsafe fn arg_out<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T> {
    // SAFETY: per the contract; only written, never read before writing.
    unsafe { p.as_mut() }.ok_or_else(|| null_arg(name))
}

/// A required object handle.
pub(super) fn arg_handle(p: *mut core::ffi::c_void, name: &str) -> Result<NonNull<TVMFFIObject>> {
    NonNull::new(p.cast()).ok_or_else(|| null_arg(name))
}

/// The error for a byte array `name` with NULL data but `size` bytes.
#[cold]
#[inline(never)]
fn null_data(name: &str, size: usize) -> Error {
    Error::value(format!("`{name}` has NULL data but size {size}"))
}

/// The bytes of a required `const TVMFFIByteArray*` argument.
///
/// # Safety
/// `p` is NULL or points to a byte array whose `data` holds `size` bytes.
pub(super) unsafe fn arg_bytes<'a>(p: *const TVMFFIByteArray, name: &str) -> Result<&'a [u8]> {
    // SAFETY: per the contract.
    let arr = unsafe { arg_ref(p, name) }?;
    if arr.data.is_null() && arr.size != 0 {
        return Err(null_data(name, arr.size));
    }
    // SAFETY: per the contract; (NULL, 0) is the empty slice.
    Ok(unsafe { crate::runtime::model::bytes::byte_slice(*arr) })
}

/// The bytes of a required NUL-terminated C string argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for `'a`.
pub(super) unsafe fn arg_cstr<'a>(p: *const c_char, name: &str) -> Result<&'a [u8]> {
    if p.is_null() {
        return Err(null_arg(name));
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}
