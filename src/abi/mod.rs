//! `#[repr(C)]` mirrors of the TVM-FFI C types, with the exact names of the
//! official `tvm/ffi/c_api.h`. Data only: no logic lives here.
//!
//! Enumerations are plain integer typedefs plus constants, because C may hand
//! us any integer where an enum is expected (a Rust enum would make that UB).
//!
//! Beside them, `exports.txt` lists every symbol the library exports: the
//! build script writes the linkers' export lists from it.
// Layers, lowest first: version, dlpack, object, any, cells, type_info, layout.
// This file only declares and re-exports; its files name each other directly.
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    reason = "matching C names"
)]

mod any;
mod cells;
/// cbindgen:ignore
mod dlpack;
mod layout;
mod object;
mod type_info;
mod version;

pub use any::*;
pub use cells::*;
pub use dlpack::*;
pub use object::*;
pub use type_info::*;
pub use version::*;
