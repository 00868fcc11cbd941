//! The formats: the symbol names of the ABI (`symbols`), the
//! `__tvm_ffi__library_bin` container ([`library_bin`], reader and writer),
//! shared-object images (`image`: mapping, segments, embedded blobs, per
//! system) and what a library file holds, read without loading it
//! ([`inspect`]). Nothing here loads or runs code.
// Layers, lowest first: symbols, library_bin, image, inspect.

pub(crate) mod image;
pub mod inspect;
pub mod library_bin;
pub(crate) mod symbols;
