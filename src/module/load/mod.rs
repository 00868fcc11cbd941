//! Building and loading: [`emit`] (object files, shared libraries, the C
//! compiler, private scratch directories), `trust` (who else can change a
//! path), `loader` (how a library file reaches the system loader, per
//! system: checks, in place or a private copy on Unix, held against change
//! on Windows), `library` (library modules, the system library,
//! releasing), `globals` (the `ffi.Module*` globals; [`load_from_file`])
//! and `cxx_core` (what the exported C++ functions run here).
// Layers, lowest first: trust, emit, loader, library, globals, cxx_core.

mod cxx_core;
pub mod emit;
pub(crate) mod globals;
pub(crate) mod library;
mod loader;
mod trust;

pub use globals::load_from_file;
