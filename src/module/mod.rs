//! Modules and the artifacts that carry them. It uses `runtime` and `abi`.
//! Seven wings, each a folder:
//!
//! - `format`: the symbol names of the ABI, the `__tvm_ffi__library_bin`
//!   container ([`library_bin`]), what a library file holds, read without
//!   loading it ([`inspect`]), and the device-code and Triton formats.
//! - `objects`: module objects ([`Module`], [`ModuleKind`]), each a C++
//!   `ModuleObj`, and the kind of a library of `__tvm_ffi_<name>` symbols.
//! - `load`: building and loading ([`emit`], [`load_from_file`]): library
//!   modules (the image, its symbols and context slots, the embedded tree),
//!   the system library and the `ffi.Module*` globals. Who can change a
//!   path, how a file reaches the system loader and how an image is read
//!   in memory are the platform wing's (`crate::platform`).
//! - `cuda`: TVM's CUDA modules, run through the CUDA driver and NVRTC
//!   (both dlopened).
//! - `backend`: what TVM's generated host code calls at run time (the
//!   parallel thread pool, workspaces, `__tvm_set_device`) and the context
//!   slots through which it reaches them.
//! - `triton`: Triton's compiled kernels, launched as Triton's own launcher
//!   launches them, on the CUDA wing's driver and the backend's workspaces.
//! - [`artifact`]: compiled artifacts with names and metadata, their sets,
//!   loaders, exported libraries and Model Library Format.
//!
//! ```
//! use tvm_ffi::runtime::{Any, Function, Result, TextKind, make_text};
//! use tvm_ffi::module::{Module, ModuleKind, property};
//!
//! // A module kind of a Rust compiler: one function, `answer`.
//! struct Answers;
//! impl ModuleKind for Answers {
//!     fn kind(&self) -> &str {
//!         "answers"
//!     }
//!     fn property_mask(&self) -> i64 {
//!         property::RUNNABLE
//!     }
//!     fn get_function(&self, _: &Module, name: &str) -> Result<Option<Function>> {
//!         Ok((name == "answer").then(|| Function::from_closure(|_| Ok(Any::from(42i64)))))
//!     }
//! }
//!
//! // A C++ `ModuleObj` to every caller: C, C++ and Python see the same.
//! let m = Module::new(Answers)?;
//! assert_eq!(m.kind_name()?, "answers");
//! let name = |s: &str| make_text(s.as_bytes(), TextKind::Str);
//! let answer = m.get_function_named(&name("answer"), true)?.expect("defined");
//! assert_eq!(answer.call(&[])?.view().as_i64(), Some(42));
//! assert!(m.get_function_named(&name("question"), true)?.is_none());
//! # Ok::<(), tvm_ffi::runtime::Error>(())
//! ```
// Layers, lowest first: format, objects, cuda, backend, triton, load, artifact.

pub mod artifact;
pub(crate) mod backend;
pub(crate) mod cuda;
pub(crate) mod format;
pub(crate) mod load;
pub(crate) mod objects;
pub(crate) mod triton;

pub use format::symbols::property;
pub use format::{cuda_blob, device_code, inspect, library_bin, triton_cache};
pub use load::{emit, load_from_file};
pub use objects::{Module, ModuleKind};
