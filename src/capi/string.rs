//! `TVMFFIStringFromByteArray`, `TVMFFIBytesFromByteArray`.

use super::args::{arg_bytes, raise_null};
use crate::abi::*;
use crate::runtime::model::boundary::raise_code;
use crate::runtime::model::string::{SMALL_MAX, TextKind, write_heap_text, write_small_text};
use crate::runtime::{Error, ErrorKind};
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
            // loads; the heap case allocates or answers that it could not).
            if bytes.len() <= SMALL_MAX {
                // SAFETY: as above, and the bytes are few enough.
                unsafe { write_small_text(bytes.as_ptr(), bytes.len(), kind, out) };
                0
            } else {
                // SAFETY: as above.
                unsafe { heap_text(bytes.as_ptr(), bytes.len(), kind, out) }
            }
        }
        Ok(_) => raise_null("out"),
        Err(e) => raise_code(e),
    }
}

/// The heap case of the constructors, out of line: a failed allocation
/// raises a MemoryError where the allocation is checked.
///
/// # Safety
/// As for `write_heap_text`.
#[inline(never)]
unsafe fn heap_text(data: *const u8, len: usize, kind: TextKind, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the contract.
    match unsafe { write_heap_text(data, len, kind.object_index(), out) } {
        Ok(()) => 0,
        Err(_) => raise_too_large(len, kind),
    }
}

/// Raises the MemoryError for text whose size the caller asked for but
/// memory cannot hold (the reference raises `std::bad_alloc` there).
#[cold]
#[inline(never)]
fn raise_too_large(len: usize, kind: TextKind) -> c_int {
    let entry = match kind {
        TextKind::Str => "TVMFFIStringFromByteArray",
        TextKind::Bytes => "TVMFFIBytesFromByteArray",
    };
    raise_code(Error::new(
        ErrorKind::MemoryError,
        format!("{entry}: cannot allocate {len} bytes"),
    ))
}

/// Makes a String from bytes (copied; NULs and non-UTF-8 kept): a
/// `kTVMFFISmallStr` for up to 7 bytes, else a `kTVMFFIStr` object.
/// Ownership: `*out` receives an owned value.
/// Errors: ValueError if `input` or `out` is NULL; MemoryError if the
/// string cannot be allocated.
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
/// Errors: ValueError if `input` or `out` is NULL; MemoryError if the
/// bytes cannot be allocated.
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
