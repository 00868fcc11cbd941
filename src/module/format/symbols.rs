//! The symbol names of the TVM-FFI module convention, defined once.
#![forbid(unsafe_code)]

/// Prefix of exported packed functions: `__tvm_ffi_<name>`.
pub const FUNCTION_PREFIX: &str = "__tvm_ffi_";
/// Prefix of doc getters: `__tvm_ffi__doc_<name>`.
pub const DOC_PREFIX: &str = "__tvm_ffi__doc_";
/// Prefix of metadata getters: `__tvm_ffi__metadata_<name>`.
pub const METADATA_PREFIX: &str = "__tvm_ffi__metadata_";
/// `void*` a library exports to learn its own module.
pub const LIBRARY_CTX: &str = "__tvm_ffi__library_ctx";
/// The embedded module tree.
pub const LIBRARY_BIN: &str = "__tvm_ffi__library_bin";
/// The kind of library modules.
pub const LIBRARY_KIND: &str = "library";
/// Loaders of serialized module kinds: `ffi.Module.load_from_bytes.<kind>`.
pub const LOAD_FROM_BYTES_PREFIX: &str = "ffi.Module.load_from_bytes.";
/// Loaders of file formats: `ffi.Module.load_from_file.<format>`.
pub const LOAD_FROM_FILE_PREFIX: &str = "ffi.Module.load_from_file.";

/// Property bits of a module (`Module::kRunnable`, ... in the reference).
pub mod property {
    /// The module can serialize itself to bytes.
    pub const BINARY_SERIALIZABLE: i64 = 0b001;
    /// The module's functions can be called.
    pub const RUNNABLE: i64 = 0b010;
    /// The module can be exported into a shared library.
    pub const COMPILATION_EXPORTABLE: i64 = 0b100;
}
/// The symbol holding the outcome of an exported library's constants
/// bootstrap (1 done, -1 failed with an error raised, -2 no init function).
pub const CONSTANTS_STATUS: &str = "__tvm_ffi__constants_status";
