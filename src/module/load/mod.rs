//! Building and loading, what upstream's `library_module.cc` holds:
//! [`emit`] (object files, shared libraries, the C compiler, scratch
//! directories), `library` (library modules, the system library,
//! releasing), `globals` (the `ffi.Module*` globals; [`load_from_file`])
//! and `cxx_core` (what the exported C++ functions run here). How a file
//! reaches the system loader, and the checks on its way, are
//! `platform::loader`'s.
// Layers, lowest first: emit, library, globals, cxx_core.

mod cxx_core;
pub mod emit;
pub(crate) mod globals;
pub(crate) mod library;

pub use globals::load_from_file;
