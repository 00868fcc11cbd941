//! Modules and the artifacts that carry them. It uses `runtime` and `abi`.
//!
//! - The formats: the symbol names of the ABI (`symbols`), the
//!   `__tvm_ffi__library_bin` container
//!   ([`library_bin`], reader and writer),
//!   shared-object images (`image`: mapping, segments, embedded blobs) and
//!   what a library file holds, read without loading it
//!   ([`inspect`]).
//! - Module objects (`object`: [`Module`]): every
//!   module is a C++ `ModuleObj`; `cxx` is the bridge to its virtual methods
//!   and makes modules of a Rust [`ModuleKind`];
//!   `extern_c` is the kind of a library of `__tvm_ffi_<name>` symbols.
//! - Building and loading: [`emit`] (object files,
//!   shared libraries, the C compiler, private scratch directories),
//!   `trust` (who else can change a path), `loader` (how a library file
//!   reaches the system loader, per system: checks, in place or a private
//!   copy on Unix, held against change on Windows),
//!   `library` (library modules, the system library, releasing),
//!   `globals` (the `ffi.Module*` globals;
//!   [`load_from_file`]), `cxx_core` (what
//!   the exported C++ functions run here).
//! - [`artifact`]: compiled artifacts with names and
//!   metadata, their sets, loaders, exported libraries and Model Library
//!   Format.
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
// Layers, lowest first: symbols, library_bin, image, trust, inspect, object, cxx, extern_c, emit, loader, library, globals, cxx_core, artifact.

pub mod artifact;
mod cxx;
mod cxx_core;
pub mod emit;
pub(crate) mod extern_c;
pub(crate) mod globals;
mod image;
pub mod inspect;
pub(crate) mod library;
pub mod library_bin;
mod loader;
pub(crate) mod object;
pub(crate) mod symbols;
mod trust;

pub use globals::load_from_file;
pub use object::{Module, ModuleKind};
pub use symbols::property;
