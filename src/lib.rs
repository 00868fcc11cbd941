//! tvm-ffi-rs: a Rust implementation of the TVM-FFI stable C ABI.
//!
//! The crate builds `libtvm_ffi.so` / `libtvm_ffi.a`, drop-in compatible with
//! the official `apache-tvm-ffi` library. It is split into four trees, each
//! using only the ones above it in this list (checked by `tests/layers.rs`):
//!
//! * [`abi`]: `#[repr(C)]` mirrors of every C type and `kTVMFFI*` constant
//!   (data only; the header in `include/` is generated from it).
//! * [`core`]: the safe runtime: objects, `Any`, strings, errors, functions,
//!   the type table and the global registry, values, reflection and the
//!   algorithms over it.
//! * [`module`]: modules, loading libraries, artifacts and their exports.
//! * `capi`: the `extern "C"` entry points, a thin layer that checks
//!   arguments, calls `core` and `module` and converts results. No panic
//!   crosses it.
//!
//! Layers, lowest first: abi, core, module, capi.
//!
//! This file composes what the layers register (`BUILTIN_*` below): the
//! only items a lower file may read from the crate root, so no layer names
//! one above it.
//!
//! Thread safety: every entry point may be called from any thread. A `const
//! T*` parameter is only read during the call; a non-const one may be written.

#![warn(clippy::undocumented_unsafe_blocks)]
#![allow(
    non_upper_case_globals,
    reason = "kTVMFFI* constants keep their C names, also in patterns"
)]

pub mod abi;
mod capi;
/// cbindgen:ignore
pub mod core;
/// cbindgen:ignore
pub mod module;

pub use capi::*;

/// Who describes the built-in types beyond their keys and indices (layouts,
/// methods, attributes). The type table runs them when it is first touched.
pub(crate) const BUILTIN_TYPES: &[fn(&mut core::model::type_table::Table)] =
    &[core::builtins::register_types];

/// Who registers the built-in globals, layer by layer: the core's, then the
/// module layer's. The registry runs them when it is first touched.
pub(crate) const BUILTIN_GLOBALS: &[fn(&mut core::call::registry::Globals<'_>)] = &[
    core::builtins::register,
    module::globals::register,
    module::artifact::set::register_globals,
    module::artifact::load::register_globals,
    module::artifact::export::register_globals,
    module::artifact::inspect::register_globals,
];

/// Who attaches an artifact set record found in a loaded library to the
/// library's module: the artifact layer, above the loader that finds it.
pub(crate) const BUILTIN_SET_RECORD_LOADER: fn(
    &'static [u8],
    &module::Module,
    bool,
) -> core::Result<()> = module::artifact::load::attach_record;
