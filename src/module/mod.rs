//! Modules and the artifacts that carry them: the `__tvm_ffi__library_bin`
//! container (reader and writer).

pub mod artifact;
pub mod artifact_export;
pub mod artifact_inspect;
pub mod artifact_load;
pub mod bootstrap;
pub mod library_bin;
pub mod mlf;
pub mod object;
pub mod params;
pub mod set_record;
pub mod symbols;

pub use object::{Module, ModuleKind};
mod cxx;
mod cxx_core;
pub mod emit;
pub mod extern_c;
pub mod globals;
mod image;
pub mod inspect;
pub mod library;
pub mod native;
