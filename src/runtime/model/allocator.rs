//! The process-wide custom object allocator slot. As in the reference
//! runtime, objects are not allocated through it yet; frontends install one
//! and read it back, and the builtin one is always available.

use crate::abi::{TVMFFICustomAllocator, TVMFFIObjectAllocHeader};
use core::ffi::c_void;
use core::sync::atomic::{AtomicPtr, Ordering};

/// Bytes before the body returned by the builtin allocator: room for the
/// `TVMFFIObjectAllocHeader`, keeping the body 16-byte aligned (the largest
/// alignment it serves).
const BODY_OFFSET: usize = 16;

use crate::platform::os::{aligned_alloc, free};

const _: () = assert!(BODY_OFFSET <= crate::platform::os::MAX_C_ALIGNMENT);

unsafe extern "C" fn builtin_delete_space(ptr: *mut c_void) {
    // SAFETY: `ptr` is a body returned by `builtin_allocate`.
    unsafe { free(ptr.cast::<u8>().sub(BODY_OFFSET).cast()) }
}

unsafe extern "C" fn builtin_allocate(
    size: usize,
    alignment: usize,
    _type_index: i32,
    _context: *mut c_void,
) -> *mut c_void {
    if alignment > BODY_OFFSET || !alignment.is_power_of_two() {
        let msg = format!(
            "the builtin allocator supports power-of-two alignments up to {BODY_OFFSET}, not {alignment}"
        );
        crate::runtime::model::error::set_raised(
            crate::runtime::model::error::Error::value(msg).into_object(),
        );
        return core::ptr::null_mut();
    }
    let Some(total) = size
        .checked_add(BODY_OFFSET)
        .and_then(|t| t.checked_next_multiple_of(BODY_OFFSET))
    else {
        crate::runtime::model::error::set_raised(
            crate::runtime::model::error::Error::value("allocation size overflows").into_object(),
        );
        return core::ptr::null_mut();
    };
    // SAFETY: the alignment is a power of two and `total` a multiple of it.
    let base = unsafe { aligned_alloc(BODY_OFFSET, total) };
    if base.is_null() {
        crate::runtime::model::error::set_raised(
            crate::runtime::model::error::Error::new(
                crate::runtime::model::error::ErrorKind::MemoryError,
                "out of memory",
            )
            .into_object(),
        );
        return base;
    }
    // SAFETY: `BODY_OFFSET` bytes precede the body inside the allocation,
    // enough for the header.
    unsafe {
        let body = base.cast::<u8>().add(BODY_OFFSET);
        let header = body
            .sub(size_of::<TVMFFIObjectAllocHeader>())
            .cast::<TVMFFIObjectAllocHeader>();
        header.write(TVMFFIObjectAllocHeader {
            delete_space: Some(builtin_delete_space),
        });
        body.cast()
    }
}

struct Builtin(TVMFFICustomAllocator);
// SAFETY: the builtin allocator is immutable and its context is NULL.
unsafe impl Sync for Builtin {}

static BUILTIN: Builtin = Builtin(TVMFFICustomAllocator {
    allocate: Some(builtin_allocate),
    context: core::ptr::null_mut(),
});

static CURRENT: AtomicPtr<TVMFFICustomAllocator> = AtomicPtr::new(core::ptr::null_mut());

/// The current allocator, never NULL.
pub fn get() -> *mut TVMFFICustomAllocator {
    let p = CURRENT.load(Ordering::Acquire);
    if p.is_null() {
        (&raw const BUILTIN.0).cast_mut()
    } else {
        p
    }
}

/// Installs `allocator`; NULL restores the builtin one.
pub fn set(allocator: *mut TVMFFICustomAllocator) {
    CURRENT.store(allocator, Ordering::Release);
}
