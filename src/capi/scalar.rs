//! `TVMFFIBigInt*`.

use super::args::{arg_bytes, arg_out, ffi_call};
use crate::abi::*;
use crate::runtime::value::scalar::{big_int_from_bytes, big_int_words};
use crate::runtime::{AnyView, Error};
use core::ffi::c_int;

/// Makes an integer from the bytes of little-endian two's-complement 64-bit
/// words: a `kTVMFFIInt` when the value fits in int64 (after dropping
/// redundant sign words), else a `kTVMFFIBigInt` object.
/// Ownership: `*out` receives an owned value.
/// Errors: ValueError when the size is not a multiple of 8 or for NULL arguments.
///
/// # Safety
/// `input` is NULL or a valid byte array; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIBigIntFromByteArray(
    input: *const TVMFFIByteArray,
    out: *mut TVMFFIAny,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (bytes, out) = unsafe { (arg_bytes(input, "input")?, arg_out(out, "out")?) };
        *out = big_int_from_bytes(bytes)?.into_raw();
        Ok(())
    })
}

/// The words of an integer value (`kTVMFFIInt` or `kTVMFFIBigInt`) as bytes,
/// least significant word first. Ownership: borrowed from `value` (for an
/// int, the bytes are `value->v_int64` itself). For any other value (or
/// NULL) returns (NULL, 0) with a TypeError raised.
///
/// # Safety
/// `value` is NULL or a valid value that outlives the returned bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIBigIntGetContentByteArray(
    value: *const TVMFFIAny,
) -> TVMFFIByteArray {
    // SAFETY: per the contract.
    let words =
        unsafe { value.as_ref() }.and_then(|v| big_int_words(unsafe { AnyView::from_raw(v) }));
    match words {
        Some(w) => TVMFFIByteArray {
            data: w.as_ptr().cast(),
            size: w.len() * 8,
        },
        None => {
            ffi_call(|| {
                Err(Error::type_error(
                    "TVMFFIBigIntGetContentByteArray: `value` is not an int or ffi.BigInt",
                ))
            });
            TVMFFIByteArray {
                data: core::ptr::null(),
                size: 0,
            }
        }
    }
}
