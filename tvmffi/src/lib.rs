//! Write [TVM-FFI](https://pypi.org/project/apache-tvm-ffi/) code in safe
//! Rust: extension libraries that Python (`tvm_ffi.load_module`), C and C++
//! load, and programs that host the runtime.
//!
//! ```toml
//! # An extension (a library Python, C or C++ loads):
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! tvmffi = "0.1"
//! # A program hosting the runtime adds:
//! # tvmffi-host = "0.1"
//! ```
//!
//! # Two modes
//!
//! * **Extension** (default): your `cdylib` is loaded *into* a process that
//!   already has a TVM-FFI runtime (the official `libtvm_ffi.so` or
//!   tvm-ffi-rs's). It calls that runtime through the C ABI, embeds none,
//!   needs no library at build time and exports only your
//!   `__tvm_ffi_<name>` symbols. Loaded where no runtime is, `dlopen`
//!   refuses it ("undefined symbol: TVMFFI...").
//! * **Host**: your program also depends on
//!   [`tvmffi-host`](https://docs.rs/tvmffi-host), which links the
//!   tvm-ffi-rs runtime in (`use tvmffi_host as _;`). The API is the same.
//!   Extensions of every kind load into it with no build script or linker
//!   flag. A library that links a runtime in and is loaded into a process
//!   with another is refused with an error naming both.
//!
//! # Export a function
//!
//! ```
//! # extern crate tvm_ffi_runtime;
//! use tvmffi::{export, bail, Result};
//!
//! /// Adds one to `x`.
//! #[export]
//! fn add_one(x: i64) -> i64 {
//!     x + 1
//! }
//!
//! #[export]
//! fn checked_div(a: i64, b: i64) -> Result<i64> {
//!     if b == 0 {
//!         bail!(ValueError, "division of {a} by zero");
//!     }
//!     Ok(a / b)
//! }
//! # fn main() {
//! #     let err = checked_div(1, 0).unwrap_err();
//! #     assert_eq!((err.kind(), err.message()), ("ValueError", "division of 1 by zero"));
//! # }
//! ```
//!
//! `tvm_ffi.load_module("libmy_ext.so").add_one(41)` returns 42; the doc
//! comment is the function's doc (`m.get_function_doc("add_one")`; the
//! Python wrapper's own `__doc__` is the package's). A wrong argument raises the reference's
//! `TypeError` (``Mismatched type on argument #0 when calling:
//! `add_one(0: int) -> int`. Expected `int` but got `ffi.SmallStr` ``), an error
//! its kind (`ValueError`), a panic a `RuntimeError`.
//!
//! # Register a global when the library loads
//!
//! ```
//! # extern crate tvm_ffi_runtime;
//! /// Found as `tvm_ffi.get_global_func("my_ext.scale")` right after
//! /// `tvm_ffi.load_module`: no registration call.
//! #[tvmffi::global("my_ext.scale")]
//! fn scale(x: f64, by: f64) -> f64 {
//!     x * by
//! }
//! # fn main() -> tvmffi::Result<()> {
//! #     let f = tvmffi::Function::get_global("my_ext.scale")?;
//! #     assert_eq!(f.call::<_, f64>((2.0, 3.0))?, 6.0);
//! #     Ok(())
//! # }
//! ```
//!
//! # Define an object type
//!
//! ```
//! # extern crate tvm_ffi_runtime;
//! use tvmffi::{Object, ObjectRef, Writable};
//!
//! #[derive(Object, Default)]
//! #[type_key = "my_ext.Point"]
//! struct Point {
//!     x: i64,
//!     #[field(default = 1.0)]
//!     scale: f64,
//!     label: Writable<String>,
//! }
//!
//! # fn main() -> tvmffi::Result<()> {
//! let p = ObjectRef::new(Point { x: 3, ..Default::default() })?;
//! p.label.set("origin".into());
//! assert_eq!(format!("{:?}", p.to_any()), r#"my_ext.Point(x=3, scale=0, label="origin")"#);
//! # Ok(())
//! # }
//! ```
//!
//! Every field is registered with the runtime: repr, structural equality
//! and hashing, JSON graphs and keyword construction work on either
//! runtime. `#[field(default = ..)]` is the default of keyword construction
//! from other languages: `Point(x=1, label="a")` from Python has `scale`
//! 1.0. Rust code builds the struct itself, so Rust's `Default` applies
//! there (`scale=0` above). `#[field(skip)]` keeps a field Rust-only.
//!
//! # Hand over a tensor
//!
//! Kernel parameters view the caller's tensors for one call: [`Slice<T>`]
//! reads a contiguous CPU tensor of `T`, [`SliceMut<T>`] writes one in
//! place, [`DeviceView`] takes a tensor on any device (CUDA, ROCm, ...) as
//! pointer, shape, strides and dtype, with [`current_stream`] the stream
//! the caller set for that device (PyTorch's current stream, from Python).
//! Converting checks dtype, device and layout: a mismatch is the call's
//! `TypeError` naming the argument.
//!
//! ```
//! # extern crate tvm_ffi_runtime;
//! use tvmffi::{export, DeviceView, Slice, SliceMut, Tensor, Result};
//!
//! /// A new tensor: `x * by`.
//! #[export]
//! fn scale(x: Slice<f32>, by: f64) -> Result<Tensor> {
//!     let out: Vec<f32> = x.iter().map(|v| v * by as f32).collect();
//!     Tensor::from_vec(out, x.shape())
//! }
//!
//! /// In place: `y = x + 1`, into a `y` the caller allocated.
//! #[export]
//! fn add_one_into(x: Slice<f32>, mut y: SliceMut<f32>) -> Result<()> {
//!     y.expect_shape("y", x.shape())?;
//!     for (y, x) in y.iter_mut().zip(x.iter()) {
//!         *y = x + 1.0;
//!     }
//!     Ok(())
//! }
//!
//! /// On any device: what a kernel launch needs (here, only described).
//! #[export]
//! fn launch(x: DeviceView) -> String {
//!     let stream = tvmffi::current_stream(x.device());
//!     format!("{} elements at {:?} on stream {stream:?}", x.shape().iter().product::<i64>(), x.data_ptr())
//! }
//! # fn main() -> Result<()> {
//! #     let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
//! #     let f = tvmffi::Function::from_typed("scale", |t: Tensor| t)?;
//! #     let back: Tensor = f.call((t,))?;
//! #     assert_eq!(back.as_slice::<f32>()?, &[1.0, 2.0]);
//! #     Ok(())
//! # }
//! ```
//!
//! The views of one call never alias within a thread: a `SliceMut` whose
//! elements overlap another live view's is refused ("already borrowed"),
//! so `add_one_into(x, x)` raises an error instead of making two Rust
//! references to the same memory. What other threads or languages do with
//! a tensor while a kernel runs is the caller's responsibility, as for
//! every TVM-FFI kernel (the C ABI's contract).
//!
//! Python passes NumPy arrays through `tvm_ffi.from_dlpack` and reads the
//! result with `numpy.from_dlpack`. [`Tensor::to_dlpack`] gives Rust
//! consumers an owned DLPack guard.
//!
//! # Load a module and call it
//!
//! ```no_run
//! # extern crate tvm_ffi_runtime;
//! # fn main() -> tvmffi::Result<()> {
//! let m = tvmffi::Module::load("build/libkernels.so")?;
//! let y: i64 = m.function("add_one")?.call((41,))?;
//! println!("add_one(41) = {y}");
//! # Ok(())
//! # }
//! ```
//!
//! # Globals
//!
//! [`Function::from_typed`] makes a function of a typed closure with owned
//! parameters, [`function!`] of any closure whose parameters and result
//! are annotated, borrowed ones too (`&str`, [`Slice`]);
//! [`Function::register_global`] and [`Function::get_global`] name it for
//! every language.
//!
//! ```
//! # extern crate tvm_ffi_runtime;
//! use tvmffi::{Function, Result, ensure};
//!
//! # fn main() -> Result<()> {
//! let greet = Function::from_typed("demo.greet", |n: i64, who: String| -> Result<String> {
//!     ensure!(n >= 0, ValueError, "n must be non-negative, got {n}");
//!     Ok(vec![format!("hi {who}"); n as usize].join(" "))
//! })?;
//! greet.register_global("demo.greet", false)?;
//! let text: String = Function::get_global("demo.greet")?.call((2, "rust"))?;
//! assert_eq!(text, "hi rust hi rust");
//! let err = greet.call::<_, String>((-1, "rust")).unwrap_err();
//! assert_eq!(err.to_string(), "ValueError: n must be non-negative, got -1");
//!
//! let shout = tvmffi::function!("demo.shout", |s: &str, times: i64| -> String {
//!     s.to_uppercase().repeat(times as usize)
//! })?;
//! assert_eq!(shout.call::<_, String>(("ab", 2))?, "ABAB");
//! # Ok(())
//! # }
//! ```
//!
//! (The examples run as doctests in a host: `cargo test --doc -p tvmffi`.)
// Layers, lowest first: sys, types, handle, error, runtime, any, convert, export, function, containers, object, tensor, kernel, module.
// Every documentation example compiles without a warning.
#![doc(test(attr(deny(warnings))))]

// The tests run in a host: the runtime linked in.
#[cfg(test)]
use tvm_ffi_runtime as _;

// The C functions and types this crate calls: public only so that
// `tests/host.rs` can check them against the runtime's own definitions;
// hidden from the documentation, for no user calls them.
#[doc(hidden)]
pub mod sys;

mod any;
mod containers;
mod convert;
mod error;
mod export;
mod function;
mod handle;
mod kernel;
mod module;
mod object;
mod runtime;
mod tensor;
mod types;

pub use any::{Any, AnyView};
pub use convert::{Bytes, FromAny, IntoAny, IntoResult, TypeSchema};
pub use error::{Error, Result};
pub use function::{Function, IntoArgs, TypedClosure};
pub use kernel::{DeviceView, Slice, SliceMut, current_stream};
pub use module::Module;
pub use object::{FieldValue, ObjectRef, ObjectType, Writable};
pub use tensor::{DataType, Device, Element, Tensor};
pub use tvmffi_macros::{Object, export, function, global};

/// What the macros expand to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{Args, Signature, call_packed, return_metadata, return_text};
    pub use crate::function::register_global_at_load;
    pub use crate::object::{FieldSpec, Registration, register, registered, value_offset};
    pub use crate::runtime::check_single_runtime;
    pub use crate::sys::RawAny;
}
