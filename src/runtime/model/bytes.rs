//! Borrowed byte arrays (`TVMFFIByteArray`) as Rust slices.

use crate::abi::TVMFFIByteArray;

/// A slice over a `TVMFFIByteArray`; (NULL, n) gives an empty slice.
///
/// # Safety
/// `arr.data` points to `arr.size` readable bytes for `'a`, or is NULL.
pub unsafe fn byte_slice<'a>(arr: TVMFFIByteArray) -> &'a [u8] {
    if arr.data.is_null() {
        &[]
    } else {
        // SAFETY: per the contract (any non-NULL pointer holds 0 bytes).
        unsafe { core::slice::from_raw_parts(arr.data.cast(), arr.size) }
    }
}
