//! tvm-ffi-rs: a Rust implementation of the TVM-FFI stable C ABI, built as
//! `libtvm_ffi.so` / `libtvm_ffi.a`, a drop-in for the official
//! `apache-tvm-ffi` library.
//!
//! **Writing TVM-FFI code in Rust?** Use the `tvmffi` crate (`tvmffi/` in
//! this repository): export a typed function (`#[tvmffi::export]`), define an
//! object type with reflected fields (`#[derive(tvmffi::Object)]`), hand a
//! tensor over through DLPack (`tvmffi::Tensor`), load a module and call it
//! (`tvmffi::Module`), all in safe Rust, as an extension loaded by either
//! runtime or in a program hosting this one (`tvmffi-host`).
//!
//! This crate is the runtime itself:
//!
//! * [`capi`]: the C ABI, every `TVMFFI*` function of `tvm/ffi/c_api.h`.
//! * [`runtime`]: objects, `Any`, strings, errors, functions and the global
//!   registry, values (tensors, containers, dtypes, JSON), reflection and
//!   the algorithms over it (structural equality and hashing, JSON graphs).
//! * [`module`]: modules, loading libraries, artifacts and their exports.
//! * [`abi`]: `#[repr(C)]` mirrors of every C type and `kTVMFFI*` constant
//!   (the header in `include/` is generated from them).
//! * `platform`: what differs between operating systems, below everything
//!   else: OS calls, mapping and loading images, trust checks, stacks,
//!   backtraces.
//!
//! Thread safety: every entry point may be called from any thread. A `const
//! T*` parameter is only read during the call; a non-const one may be written.

// Layers, lowest first: platform, abi, runtime, module, capi.
// Each layer uses only the ones before it (checked by `tests/layers.rs`).
// This file composes what the layers register (`BUILTIN_*` below): the only
// items a lower file may read from the crate root, so no layer names one
// above it.

// Every documentation example compiles without a warning.
#![doc(test(attr(deny(warnings))))]
#![warn(clippy::undocumented_unsafe_blocks)]
#![allow(
    non_upper_case_globals,
    reason = "kTVMFFI* constants keep their C names, also in patterns"
)]

pub mod abi;
pub mod capi;
pub mod module;
pub(crate) mod platform;
pub mod runtime;

/// Who describes the built-in types beyond their keys and indices (layouts,
/// methods, attributes). The type table runs them when it is first touched.
pub(crate) const BUILTIN_TYPES: &[fn(&mut runtime::model::type_table::Table)] =
    &[runtime::builtins::register_types];

/// Who registers the built-in globals, layer by layer: the core's, then the
/// module layer's. The registry runs them when it is first touched.
pub(crate) const BUILTIN_GLOBALS: &[fn(&mut runtime::call::registry::Globals<'_>)] = &[
    runtime::builtins::register,
    module::load::globals::register,
    module::cuda::module::register_globals,
    module::backend::device::register_globals,
    module::artifact::cuda::register_globals,
    module::artifact::triton::register_globals,
    module::artifact::set::register_globals,
    module::artifact::load::register_globals,
    module::artifact::export::register_globals,
    module::artifact::inspect::register_globals,
];

/// Every context slot the loader fills in a library (`__TVMBackend*`,
/// `__TVMFFI*`) that no runtime registered, with what it writes there, and
/// the stubs for the others: the C layer's entry points, which the loader
/// below it cannot name (`module::backend::context`).
pub(crate) const BUILTIN_CONTEXT_SLOTS: fn() -> module::backend::context::Fillers =
    capi::backend::context_slots;

/// Who attaches an artifact set record found in a loaded library to the
/// library's module: the artifact layer, above the loader that finds it.
pub(crate) const BUILTIN_SET_RECORD_LOADER: fn(
    &'static [u8],
    &module::Module,
    bool,
) -> runtime::Result<()> = module::artifact::load::attach_record;

// `BUILTIN_ABI_EXPORTS`: every symbol of the ABI with its definition's
// address, for the soname stub (written by build.rs).
include!(concat!(env!("OUT_DIR"), "/abi_exports.rs"));
