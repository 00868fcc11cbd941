//! Building and loading, what upstream's `library_module.cc` holds:
//! [`emit`] (object files, shared libraries, the C compiler, scratch
//! directories), the library module split by concern (`image`: a mapped
//! library and its unload queue; `symbols`: where a module finds its
//! symbols, the system-library table; `context`: the context slots;
//! `function`: a library's functions; `tree`: the embedded module tree;
//! `library`: the module kind, opening and releasing; `system_lib`:
//! `ffi.SystemLib`), `globals` (the `ffi.Module*` globals;
//! [`load_from_file`]) and `cxx_core` (what the exported C++ functions run
//! here). How a file reaches the system loader, and the checks on its way,
//! are `platform::loader`'s.
// Layers, lowest first: emit, image, symbols, context function, tree, library, system_lib, globals, cxx_core.

mod context;
mod cxx_core;
pub mod emit;
mod function;
pub(crate) mod globals;
mod image;
pub(crate) mod library;
mod symbols;
mod system_lib;
mod tree;

pub use globals::load_from_file;
pub(crate) use symbols::register_system_symbol;
