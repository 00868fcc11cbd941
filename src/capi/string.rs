//! `TVMFFIStringFromByteArray`, `TVMFFIBytesFromByteArray`.

use super::{arg_bytes, raise_null};
use crate::abi::*;
use crate::core::boundary::raise_code;
use crate::core::string::{TextKind, write_text};
use core::ffi::c_int;

/// Shared body of the two constructors.
///
/// # Safety
/// As for the entry points.
#[inline(always)]
unsafe fn text_from_byte_array(
    input: *const TVMFFIByteArray,
    out: *mut TVMFFIAny,
    kind: TextKind,
) -> c_int {
    // SAFETY: per the entry points' contracts.
    let bytes = unsafe { arg_bytes(input, "input") };
    match bytes {
        Ok(bytes) if !out.is_null() => {
            // SAFETY: readable bytes and a writable `out`, which may overlap
            // them (`write_text` reads them first).
            // No unwinding guard: nothing here panics (small text is two
            // loads; the heap case allocates or aborts, as allocation does).
            unsafe { write_text(bytes.as_ptr(), bytes.len(), kind, out) };
            0
        }
        Ok(_) => raise_null("out"),
        Err(e) => raise_code(e),
    }
}

/// Makes a String from bytes (copied; NULs and non-UTF-8 kept): a
/// `kTVMFFISmallStr` for up to 7 bytes, else a `kTVMFFIStr` object.
/// Ownership: `*out` receives an owned value.
/// Errors: ValueError if `input` or `out` is NULL.
///
/// # Safety
/// `input` is NULL or a valid byte array; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIStringFromByteArray(
    input: *const TVMFFIByteArray,
    out: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { text_from_byte_array(input, out, TextKind::Str) }
}

/// Makes a Bytes value from bytes (copied): a `kTVMFFISmallBytes` for up to
/// 7 bytes, else a `kTVMFFIBytes` object.
/// Ownership: `*out` receives an owned value.
/// Errors: ValueError if `input` or `out` is NULL.
///
/// # Safety
/// `input` is NULL or a valid byte array; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIBytesFromByteArray(
    input: *const TVMFFIByteArray,
    out: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { text_from_byte_array(input, out, TextKind::Bytes) }
}
