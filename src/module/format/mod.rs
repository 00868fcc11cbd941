//! The formats: the symbol names of the ABI (`symbols`), the
//! `__tvm_ffi__library_bin` container ([`library_bin`], reader and writer),
//! what a library file holds, read without loading it ([`inspect`], over
//! the images `platform::image` maps), and device code:
//! TVM's serialized CUDA module ([`cuda_blob`]), Triton's cache entries
//! ([`triton_cache`]) and what cubins, fatbins,
//! PTX and CUDA source define ([`device_code`]). Nothing here loads or runs
//! code.
// Layers, lowest first: symbols, library_bin cuda_blob device_code triton_cache, inspect.

pub mod cuda_blob;
pub mod device_code;
pub mod inspect;
pub mod library_bin;
pub(crate) mod symbols;
pub mod triton_cache;
