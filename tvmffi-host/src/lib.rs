//! The tvm-ffi-rs runtime for Rust programs that host TVM-FFI: add this
//! crate beside [`tvmffi`] and the program has a runtime, with nothing else
//! to set up (no build script, no linker flags).
//!
//! ```toml
//! [dependencies]
//! tvmffi = "0.1"
//! tvmffi-host = "0.1"
//! ```
//!
//! ```
//! use tvmffi_host as _; // links the runtime into this program
//!
//! let double = tvmffi::Function::from_typed("host.double", |x: i64| x * 2)?;
//! double.register_global("host.double", false)?;
//! let found = tvmffi::Function::get_global("host.double")?;
//! assert_eq!(found.call::<_, i64>((21,))?, 42);
//! # Ok::<(), tvmffi::Error>(())
//! ```
//!
//! # Loading extensions
//!
//! [`tvmffi::Module::load`] loads any TVM-FFI extension: C++ ones built
//! with the official headers, the official Rust crate's, `tvmffi`'s. They
//! carry `NEEDED libtvm_ffi.so`; on Linux the runtime answers for that
//! name itself (before the first load it maps a small stub with that soname
//! whose symbols are the runtime's own), so what is on the loader path does
//! not matter and the program exports nothing. On Windows an extension
//! imports `tvm_ffi.dll` by name: a host there uses that DLL (tvm-ffi-rs's
//! or the official one), beside the program.
//!
//! # Only programs
//!
//! A library loaded into a TVM-FFI process (an extension) must not depend
//! on this crate: it would carry a second runtime. Its calls then fail
//! with `RuntimeError: two TVM-FFI runtimes in one process: ...`.
// Every documentation example compiles without a warning.
#![doc(test(attr(deny(warnings))))]
#![forbid(unsafe_code)]

// The runtime itself: linked in wherever this crate is.
#[cfg(not(windows))]
use tvm_ffi_runtime as _;
