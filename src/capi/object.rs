//! `TVMFFIObject*`, `TVMFFIGetVersion` and the custom allocator slot.

use super::args::{arg_out, ffi_call, raise_null};
use crate::abi::*;
use crate::runtime::model::object::{dec_ref, inc_ref, new_object};
use crate::runtime::{Error, model::allocator};
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;

/// Reports the version of the TVM FFI ABI this library implements.
///
/// # Safety
/// `out_version` is NULL (ignored) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIGetVersion(out_version: *mut TVMFFIVersion) {
    // SAFETY: per the contract.
    if let Some(out) = unsafe { out_version.as_mut() } {
        *out = TVMFFIVersion {
            major: TVM_FFI_VERSION_MAJOR,
            minor: TVM_FFI_VERSION_MINOR,
            patch: TVM_FFI_VERSION_PATCH,
        };
    }
}

/// Adds a strong reference to an object. Thread safe (atomic).
/// Errors: ValueError if `obj` is NULL.
///
/// # Safety
/// `obj` is NULL or a live object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIObjectIncRef(obj: TVMFFIObjectHandle) -> c_int {
    match NonNull::new(obj.cast()) {
        Some(obj) => {
            // SAFETY: non-null and live per the contract.
            unsafe { inc_ref(obj) };
            0
        }
        None => raise_null("obj"),
    }
}

/// Drops a strong reference to an object; the last one runs its deleter.
/// A NULL `obj` is a no-op that returns 0 (as in the reference).
///
/// # Safety
/// `obj` is NULL or a live object of which the caller owns a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIObjectDecRef(obj: TVMFFIObjectHandle) -> c_int {
    match NonNull::new(obj.cast()) {
        Some(obj) => {
            // SAFETY: non-null, live, and the caller gives up one reference.
            // Deleters never unwind: ours catch panics, foreign ones are C.
            unsafe { dec_ref(obj) };
            0
        }
        // Releasing nothing is a no-op, as in the reference.
        None => 0,
    }
}

/// The cell of an opaque object and the deleter of the wrapped handle.
#[repr(C)]
struct Opaque {
    cell: TVMFFIOpaqueObjectCell,
    deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

// SAFETY: the frontend's handle may be released from any thread (its
// deleter takes whatever lock it needs, e.g. the GIL).
unsafe impl Send for Opaque {}
// SAFETY: the object never touches the handle except in the deleter.
unsafe impl Sync for Opaque {}

impl Drop for Opaque {
    fn drop(&mut self) {
        if let Some(deleter) = self.deleter {
            // SAFETY: runs once, when the opaque object dies.
            unsafe { deleter(self.cell.handle) };
        }
    }
}

/// Wraps a frontend handle (e.g. a `PyObject*`) in an object whose death
/// calls `deleter(handle)`. Only `kTVMFFIOpaquePyObject` is supported.
/// Ownership: `*out` receives a new reference.
/// Errors: RuntimeError for another type index; ValueError if `out` is NULL.
///
/// # Safety
/// `out` is NULL or writable; `deleter` is NULL or callable with `handle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIObjectCreateOpaque(
    handle: *mut c_void,
    type_index: i32,
    deleter: Option<unsafe extern "C" fn(handle: *mut c_void)>,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { arg_out(out, "out") }?;
        if type_index != kTVMFFIOpaquePyObject {
            return Err(Error::runtime(
                "Only kTVMFFIOpaquePyObject is supported for now",
            ));
        }
        let cell = TVMFFIOpaqueObjectCell { handle };
        *out = new_object(type_index, Opaque { cell, deleter })
            .into_raw()
            .as_ptr()
            .cast();
        Ok(())
    })
}

/// The current custom object allocator (never NULL).
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIGetCustomAllocator() -> *mut TVMFFICustomAllocator {
    super::args::ffi_call_or(core::ptr::null_mut(), allocator::get)
}

/// Installs a custom object allocator; NULL restores the builtin one. Not
/// synchronised with object creation: install it once, at start-up.
///
/// # Safety
/// `allocator` is NULL or valid for the rest of the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFISetCustomAllocator(allocator: *mut TVMFFICustomAllocator) -> c_int {
    super::args::ffi_call(|| {
        allocator::set(allocator);
        Ok(())
    })
}
