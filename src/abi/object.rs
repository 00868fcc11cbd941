//! The object header: handles, deleters and the `TVMFFIObject` every object
//! starts with.

use core::ffi::{c_int, c_void};
use core::sync::atomic::AtomicU64;

/// Handle to an object from the C API's point of view (`TVMFFIObject*`).
pub type TVMFFIObjectHandle = *mut c_void;

/// Bit mask of the `flags` argument of an object deleter.
pub type TVMFFIObjectDeleterFlagBitMask = i32;
/// The strong count reached zero: destroy the contents, keep the memory.
pub const kTVMFFIObjectDeleterFlagBitMaskStrong: TVMFFIObjectDeleterFlagBitMask = 1 << 0;
/// The weak count reached zero: free the memory.
pub const kTVMFFIObjectDeleterFlagBitMaskWeak: TVMFFIObjectDeleterFlagBitMask = 1 << 1;
/// Both counts reached zero at once: destroy and free.
pub const kTVMFFIObjectDeleterFlagBitMaskBoth: TVMFFIObjectDeleterFlagBitMask =
    kTVMFFIObjectDeleterFlagBitMaskStrong | kTVMFFIObjectDeleterFlagBitMaskWeak;

/// Deleter of an object: called with the object and a
/// `TVMFFIObjectDeleterFlagBitMask`.
pub type TVMFFIObjectDeleter = unsafe extern "C" fn(self_: *mut c_void, flags: c_int);

/// The header of every reference counted object. In C the deleter shares an
/// anonymous union with `int64_t __ensure_align`; the C text is emitted
/// verbatim by the header generator.
#[repr(C)]
pub struct TVMFFIObject {
    /// Low 32 bits: strong count; high 32 bits: weak count (+1 while any
    /// strong reference exists).
    pub combined_ref_count: AtomicU64,
    /// Type index of the object.
    pub type_index: i32,
    /// Padding, always zero.
    pub __padding: u32,
    /// Deleter, may be NULL.
    pub deleter: Option<TVMFFIObjectDeleter>,
}
