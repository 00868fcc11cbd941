//! The formats: the symbol names of the ABI (`symbols`), the
//! `__tvm_ffi__library_bin` container ([`library_bin`], reader and writer),
//! shared-object images (`image`: mapping, segments, embedded blobs, per
//! system) and what a library file holds, read without loading it
//! ([`inspect`]), and the soname stub that stands for `libtvm_ffi.so` when
//! the runtime is linked into a program (`soname_stub`), and device code:
//! TVM's serialized CUDA module ([`cuda_blob`]) and what cubins, fatbins,
//! PTX and CUDA source define ([`device_code`]). Nothing here loads or runs
//! code.
// Layers, lowest first: symbols, library_bin soname_stub cuda_blob device_code, image, inspect.

pub mod cuda_blob;
pub mod device_code;
pub(crate) mod image;
pub mod inspect;
pub mod library_bin;
#[cfg(target_os = "linux")]
pub(crate) mod soname_stub;
pub(crate) mod symbols;
