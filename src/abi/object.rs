//! The object header and the cells that follow it in built-in objects.

use super::{TVMFFIAny, TVMFFIByteArray};
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
/// cbindgen:no-export
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

/// How `update_backtrace` of an error cell changes the backtrace.
pub type TVMFFIBacktraceUpdateMode = i32;
/// Replace the backtrace.
pub const kTVMFFIBacktraceUpdateModeReplace: TVMFFIBacktraceUpdateMode = 0;
/// Append to the backtrace.
pub const kTVMFFIBacktraceUpdateModeAppend: TVMFFIBacktraceUpdateMode = 1;

/// The cell of an Error object, right after its header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIErrorCell {
    /// The kind of the error.
    pub kind: TVMFFIByteArray,
    /// The message of the error.
    pub message: TVMFFIByteArray,
    /// The backtrace, `  File "<file>", line <n>, in <func>` lines.
    pub backtrace: TVMFFIByteArray,
    /// Replace or append the backtrace of the error `self`.
    pub update_backtrace: Option<
        unsafe extern "C" fn(
            self_: TVMFFIObjectHandle,
            backtrace: *const TVMFFIByteArray,
            update_mode: i32,
        ),
    >,
    /// The error that caused this one, or NULL.
    pub cause_chain: TVMFFIObjectHandle,
    /// Extra context object, or NULL.
    pub extra_context: TVMFFIObjectHandle,
}

/// The packed calling convention: 0 on success; nonzero with an error raised
/// in the thread-local slot (-2: a frontend error is already pending).
pub type TVMFFISafeCallType = Option<
    unsafe extern "C" fn(
        handle: *mut c_void,
        args: *const TVMFFIAny,
        num_args: i32,
        result: *mut TVMFFIAny,
    ) -> c_int,
>;

/// The cell of a Function object, right after its header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIFunctionCell {
    /// A C API compatible call with error catching.
    pub safe_call: TVMFFISafeCallType,
    /// C++ call entry; always NULL for functions this library makes.
    pub cpp_call: *mut c_void,
}

/// The cell of an opaque object, right after its header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIOpaqueObjectCell {
    /// The wrapped handle, e.g. a `PyObject*`.
    pub handle: *mut c_void,
}

/// Header placed before objects allocated by a custom allocator.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIObjectAllocHeader {
    /// Frees the space the allocator gave.
    pub delete_space: Option<unsafe extern "C" fn(ptr: *mut c_void)>,
}

/// A custom object allocator installed by a frontend.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFICustomAllocator {
    /// Allocates `size` bytes aligned to `alignment` for an object of `type_index`.
    pub allocate: Option<
        unsafe extern "C" fn(
            size: usize,
            alignment: usize,
            type_index: i32,
            context: *mut c_void,
        ) -> *mut c_void,
    >,
    /// Context passed to `allocate`.
    pub context: *mut c_void,
}
