//! The C ABI: every `extern "C"` function of `tvm/ffi/c_api.h`, callable
//! from Rust too. One file per C name family. Each entry point checks its
//! arguments with the helpers of `args`, calls the core and converts the result; `args::ffi_call`
//! turns errors and panics into a raised error and a nonzero return.
// This file only declares and re-exports.
// Layers, lowest first: args, *.
#![allow(non_snake_case, reason = "C API names")]

mod args;
mod artifact;
pub(crate) mod backend;
mod dtype;
mod env;
mod error;
mod function;
mod init_once;
mod library_exports;
mod object;
mod scalar;
mod string;
mod tensor;
mod type_table;

pub use artifact::*;
pub use dtype::*;
pub use env::*;
pub use error::*;
pub use function::*;
pub use init_once::*;
pub use library_exports::*;
pub use object::*;
pub use scalar::*;
pub use string::*;
pub use tensor::*;
pub use type_table::*;
