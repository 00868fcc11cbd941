//! The version of the ABI this library implements.

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
