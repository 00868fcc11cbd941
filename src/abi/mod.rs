//! `#[repr(C)]` mirrors of the TVM-FFI C types, with the exact names of the
//! official `tvm/ffi/c_api.h`. Data only: no logic lives here.
//!
//! Enumerations are plain integer typedefs plus constants, because C may hand
//! us any integer where an enum is expected (a Rust enum would make that UB).
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    reason = "matching C names"
)]

mod any;
/// cbindgen:ignore
mod dlpack;
mod layout;
mod object;
mod type_info;

pub use any::*;
pub use dlpack::*;
pub use object::*;
pub use type_info::*;

/// TVM FFI major version of the ABI this library implements.
pub const TVM_FFI_VERSION_MAJOR: u32 = 0;
/// TVM FFI minor version of the ABI this library implements.
pub const TVM_FFI_VERSION_MINOR: u32 = 1;
/// TVM FFI patch version of the ABI this library implements.
pub const TVM_FFI_VERSION_PATCH: u32 = 16;

/// The version of the TVM FFI ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TVMFFIVersion {
    /// TVM FFI major version.
    pub major: u32,
    /// TVM FFI minor version.
    pub minor: u32,
    /// TVM FFI patch version.
    pub patch: u32,
}

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
    pub data: *mut core::ffi::c_void,
    /// Number of elements used.
    pub size: i64,
    /// Number of elements allocated.
    pub capacity: i64,
    /// Deleter of `data` when it is allocated separately, else NULL.
    pub data_deleter: Option<unsafe extern "C" fn(*mut core::ffi::c_void)>,
}
