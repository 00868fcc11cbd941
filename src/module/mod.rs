//! Modules and the artifacts that carry them. It uses the core and `abi`.
//!
//! Layers, lowest first: symbols, library_bin, image, inspect, object, cxx, extern_c, emit, library, globals, cxx_core, artifact.
//!
//! - The formats: the symbol names of the ABI ([`symbols`]), the
//!   `__tvm_ffi__library_bin` container ([`library_bin`], reader and
//!   writer), shared-object images (`image`: mapping, segments, embedded
//!   blobs) and what a library file holds, read without loading it
//!   ([`inspect`]).
//! - Module objects ([`object`]): every module is a C++ `ModuleObj`; `cxx`
//!   is the bridge to its virtual methods and makes modules of a Rust
//!   kind; [`extern_c`] is the kind of a library of `__tvm_ffi_<name>`
//!   symbols.
//! - Building and loading: [`emit`] (object files, shared libraries, the C
//!   compiler, private scratch directories), [`library`] (loading shared
//!   libraries, the system library, releasing), [`globals`] (the `ffi.Module*`
//!   globals), `cxx_core` (what the exported C++ functions run here).
//! - [`artifact`]: compiled artifacts with names and metadata, their sets,
//!   loaders, exported libraries and Model Library Format.

pub mod artifact;
mod cxx;
mod cxx_core;
pub mod emit;
pub mod extern_c;
pub mod globals;
mod image;
pub mod inspect;
pub mod library;
pub mod library_bin;
pub mod object;
pub mod symbols;

pub use object::{Module, ModuleKind};
