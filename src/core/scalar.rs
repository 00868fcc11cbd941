//! Shape and BigInt objects: a cell after the header and the data in place.
//!
//! * Shape: `{TVMFFIObject, TVMFFIShapeCell{data, size}, int64 dims[size]}`.
//! * BigInt: `{TVMFFIObject, size_t nwords, int64 words[nwords]}`, words
//!   least significant first, minimal two's complement; values that fit in
//!   an int64 are never BigInt objects but `kTVMFFIInt`.

use super::any::{Any, AnyView};
use super::error::{Error, Result};
use super::object::{INITIAL_REF_COUNT, ObjectRef};
use crate::abi::*;
use core::alloc::Layout;
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use core::sync::atomic::AtomicU64;

/// Header plus a 16-byte-or-smaller cell, followed by `n` int64 words.
#[repr(C)]
struct Inline<C> {
    header: TVMFFIObject,
    cell: C,
}

fn inline_layout<C>(words: usize) -> Layout {
    let size = words
        .checked_mul(8)
        .and_then(|b| b.checked_add(size_of::<Inline<C>>()))
        .expect("object size overflows");
    Layout::from_size_align(size, 8).expect("valid layout")
}

/// Allocates `Inline<C>` + `words` int64s; `fill` writes the cell given the
/// address of the words.
fn new_inline<C>(
    type_index: i32,
    words: &[i64],
    deleter: unsafe extern "C" fn(*mut c_void, c_int),
    cell: impl FnOnce(*const i64) -> C,
) -> ObjectRef {
    let layout = inline_layout::<C>(words.len());
    // SAFETY: the layout has a nonzero size.
    let mem = unsafe { std::alloc::alloc(layout) };
    let Some(obj) = NonNull::new(mem.cast::<Inline<C>>()) else {
        std::alloc::handle_alloc_error(layout)
    };
    // SAFETY: the allocation holds the header, the cell and `words.len()`
    // int64s right after them (8-aligned).
    unsafe {
        let data = mem.add(size_of::<Inline<C>>()).cast::<i64>();
        core::ptr::copy_nonoverlapping(words.as_ptr(), data, words.len());
        obj.as_ptr().write(Inline {
            header: TVMFFIObject {
                combined_ref_count: AtomicU64::new(INITIAL_REF_COUNT),
                type_index,
                __padding: 0,
                deleter: Some(deleter),
            },
            cell: cell(data),
        });
        ObjectRef::from_raw(obj.cast())
    }
}

/// Frees an `Inline<C>` whose word count `words(cell)` tells its layout.
///
/// # Safety
/// `this` was made by `new_inline::<C>`; called by the deleter protocol.
unsafe fn free_inline<C>(this: *mut c_void, flags: c_int, words: impl FnOnce(&C) -> usize) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: per the contract; the cell is unchanged since creation.
        unsafe {
            let layout = inline_layout::<C>(words(&(*this.cast::<Inline<C>>()).cell));
            std::alloc::dealloc(this.cast(), layout);
        }
    }
}

unsafe extern "C" fn delete_shape(this: *mut c_void, flags: c_int) {
    // SAFETY: installed only in shapes made by `new_shape`.
    unsafe { free_inline::<TVMFFIShapeCell>(this, flags, |c| c.size) }
}

unsafe extern "C" fn delete_big_int(this: *mut c_void, flags: c_int) {
    // SAFETY: installed only in BigInts made by `big_int_from_words`.
    unsafe { free_inline::<usize>(this, flags, |n| *n) }
}

/// Makes a Shape object with the given dimensions.
pub fn new_shape(dims: &[i64]) -> ObjectRef {
    new_inline(kTVMFFIShape, dims, delete_shape, |data| TVMFFIShapeCell {
        data,
        size: dims.len(),
    })
}

/// The dimensions of a Shape object (ours or foreign).
pub fn shape_dims(obj: &ObjectRef) -> Option<&[i64]> {
    if obj.type_index() != kTVMFFIShape {
        return None;
    }
    // SAFETY: a Shape has its cell right after the header, describing
    // dimensions alive as long as the object.
    unsafe {
        let cell = &*obj
            .as_ptr()
            .cast::<u8>()
            .add(size_of::<TVMFFIObject>())
            .cast::<TVMFFIShapeCell>();
        Some(if cell.size == 0 {
            &[]
        } else {
            core::slice::from_raw_parts(cell.data, cell.size)
        })
    }
}

/// Makes an integer from little-endian two's-complement 64-bit words:
/// `kTVMFFIInt` when it fits, else a minimal BigInt object.
pub fn big_int_from_words(words: &[i64]) -> Any {
    let mut n = words.len();
    while n > 1 && words[n - 1] == if words[n - 2] < 0 { -1 } else { 0 } {
        n -= 1;
    }
    if n <= 1 {
        return Any::from(words.first().copied().unwrap_or(0));
    }
    let words = &words[..n];
    Any::from(new_inline(kTVMFFIBigInt, words, delete_big_int, |_| {
        words.len()
    }))
}

/// Makes an integer from the raw bytes of its words.
pub fn big_int_from_bytes(bytes: &[u8]) -> Result<Any> {
    if bytes.len() % 8 != 0 {
        return Err(Error::value(
            "BigInt content must contain whole 64-bit words",
        ));
    }
    let words: Vec<i64> = bytes
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok(big_int_from_words(&words))
}

/// The words of an integer value: the int64 itself, or a BigInt's words.
pub fn big_int_words<'a>(value: AnyView<'a>) -> Option<&'a [i64]> {
    let raw: &'a TVMFFIAny = value.raw();
    match raw.type_index {
        // SAFETY: ints store `v_int64`.
        kTVMFFIInt => Some(core::slice::from_ref(unsafe { &raw.value.v_int64 })),
        kTVMFFIBigInt => {
            let obj = value.as_object_ptr()?;
            // SAFETY: a BigInt stores its word count after the header and
            // the words after that; the view keeps it alive for `'a`.
            unsafe {
                let base = obj.as_ptr().cast::<u8>().add(size_of::<TVMFFIObject>());
                let n = *base.cast::<usize>();
                Some(core::slice::from_raw_parts(base.add(8).cast::<i64>(), n))
            }
        }
        _ => None,
    }
}
