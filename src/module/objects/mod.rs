//! Module objects: every module is a C++ `ModuleObj` (`module`:
//! [`Module`], [`ModuleKind`]); `cxx` is the bridge to its virtual methods
//! and makes modules of a Rust [`ModuleKind`]; `extern_c` is the kind of a
//! library of `__tvm_ffi_<name>` symbols.
// Layers, lowest first: module, cxx extern_c.

pub(crate) mod cxx;
pub(crate) mod extern_c;
pub(crate) mod module;

pub use module::{Module, ModuleKind};
