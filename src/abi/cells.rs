//! The cells that follow the object header in built-in objects (errors,
//! functions, opaque objects, shapes, sequences), the byte arrays they
//! hold, the packed calling convention and the custom allocator.

use super::any::TVMFFIAny;
use super::object::TVMFFIObjectHandle;
use core::ffi::{c_int, c_void};

/// A borrowed sequence of bytes; `data` need not be NUL-terminated.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIByteArray {
    /// The data pointer.
    pub data: *const core::ffi::c_char,
    /// The size of the data.
    pub size: usize,
}

/// The shape cell of a Shape object.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIShapeCell {
    /// The data pointer.
    pub data: *const i64,
    /// The size of the data.
    pub size: usize,
}

/// The sequence cell shared by Array and List objects.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFISeqCell {
    /// Data pointer to the first element of the sequence.
    pub data: *mut c_void,
    /// Number of elements used.
    pub size: i64,
    /// Number of elements allocated.
    pub capacity: i64,
    /// Deleter of `data` when it is allocated separately, else NULL.
    pub data_deleter: Option<unsafe extern "C" fn(*mut c_void)>,
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
