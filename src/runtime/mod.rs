//! The safe runtime behind the C API, in five layers and a composer; each
//! layer uses only the ones below it (checked by `tests/layers.rs`):
//!
//! - `model`: objects, `Any`, strings, errors, the type table;
//! - `call`: functions, typed signatures, the global registry;
//! - `value`: containers, scalars, tensors, dtypes, JSON;
//! - `reflect`: fields, type definitions, the built-in reflected types;
//! - `algo`: copies, comparisons, hashing, visitors, serialization;
//! - `builtins`: the core's built-in globals and type descriptions, which
//!   the crate root composes with the module layer's.
//!
//! Nothing here is `extern "C"` except the callbacks stored in objects
//! (deleters, `safe_call` trampolines), which run through `model::boundary`
//! like every exported entry point.
//!
//! The folders are private; the public API is what this file re-exports:
//! values ([`Any`], [`AnyView`],
//! [`ObjectRef`], strings, arrays), functions and
//! the global [`registry`], errors,
//! [`tensor`]s with DLPack and dlpark interop,
//! [`dtype`]s and [`json`].
//!
//! ```
//! use tvm_ffi::runtime::registry::{self, Registration};
//! use tvm_ffi::runtime::{Any, Error, ErrorKind, Function, TextKind, make_text, new_array};
//!
//! // A Rust closure as a global: C, C++ and Python call it by name.
//! let add = Function::from_closure(|args| {
//!     args.expect_len("doc.add", 2)?;
//!     match (args.get(0).as_i64(), args.get(1).as_i64()) {
//!         (Some(a), Some(b)) => Ok(Any::from(a + b)),
//!         _ => Err(Error::type_error("doc.add takes two ints")),
//!     }
//! });
//! registry::set_global(b"doc.add", add, b"", false, Registration::Function)?;
//! let f = registry::get_global(b"doc.add").expect("registered above");
//! let sum = f.call(&[Any::from(40i64).view(), Any::from(2i64).view()])?;
//! assert_eq!(sum.view().as_i64(), Some(42));
//!
//! // Errors carry the reference's kinds.
//! let err = f.call(&[make_text(b"forty", TextKind::Str).view()]).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "TypeError: Mismatched number of arguments when calling: `doc.add`. Expected 2 but got 1"
//! );
//! assert_eq!(ErrorKind::TypeError.as_str(), "TypeError");
//!
//! // Built-in globals work on values made here.
//! let size = registry::get_global(b"ffi.ArraySize").expect("a built-in");
//! let array = Any::from(new_array(vec![Any::from(1i64), Any::from(2i64)]));
//! assert_eq!(size.call(&[array.view()])?.view().as_i64(), Some(2));
//! # Ok::<(), Error>(())
//! ```
// Layers, lowest first: model, call, value, reflect, algo, builtins.

pub(crate) mod algo;
pub(crate) mod builtins;
pub(crate) mod call;
pub(crate) mod model;
pub(crate) mod reflect;
pub(crate) mod value;

pub use call::function::{Args, Function};
pub use model::any::{Any, AnyView};
pub use model::bytes::byte_slice;
pub use model::error::{Error, ErrorKind, ErrorRepr, Result, error_cell, take_raised};
pub use model::object::ObjectRef;
pub use model::string::{TextKind, make_text};
pub use value::seq::{new_array, new_list};

/// The global function registry: lookups, registration, removal (see the
/// example of [`runtime`](crate::runtime)).
pub mod registry {
    pub use super::call::registry::{
        Registration, get_global, metadata, names, remove_global, set_global,
    };
}

/// Tensors: DLPack in and out, and interop with `dlpark`, without copies.
///
/// ```
/// use dlpark::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType};
/// use dlpark::ffi::{DLManagedTensorVersioned, DLPackVersion, DLTensor};
/// use tvm_ffi::abi::{kDLCPU, kDLFloat};
/// use tvm_ffi::runtime::tensor::{dl_tensor, from_dlpark, to_dlpark};
///
/// // A tensor as any DLPack producer hands it over (this one is never freed).
/// let data: &'static mut [f32] = Box::leak(Box::new([1.0, 2.0, 3.0]));
/// let shape: &'static mut [i64] = Box::leak(Box::new([3]));
/// let managed = Box::new(DLManagedTensorVersioned {
///     version: DLPackVersion { major: 1, minor: 1 },
///     manager_ctx: std::ptr::null_mut(),
///     deleter: None,
///     flags: dlpark::DlpackFlags::empty(),
///     dl_tensor: DLTensor {
///         data: data.as_mut_ptr().cast(),
///         device: DLDevice { device_type: DLDeviceType(kDLCPU as u32), device_id: 0 },
///         ndim: 1,
///         dtype: DLDataType { code: DLDataTypeCode(kDLFloat as u8), bits: 32, lanes: 1 },
///         shape: shape.as_mut_ptr(),
///         strides: std::ptr::null_mut(),
///         byte_offset: 0,
///     },
/// });
/// // SAFETY: a valid managed tensor, handed over.
/// let producer = unsafe { dlpark::versioned::Dlpack::from_raw(Box::into_raw(managed)) }?;
///
/// let tensor = from_dlpark(producer)?;
/// assert_eq!(dl_tensor(&tensor)?.data, data.as_mut_ptr().cast(), "shared, not copied");
///
/// // And back out, to any dlpark consumer.
/// let back = to_dlpark(&tensor)?;
/// assert_eq!(back.validate()?.shape(), [3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod tensor {
    pub use super::value::tensor::{
        ManagedTensor, dl_tensor, from_dlpack, from_dlpack_versioned, from_dlpark, shape,
        to_dlpack, to_dlpark,
    };
}

/// DLPack data types as text (`"float32"`, `"int8x4"`), both ways.
///
/// ```
/// use tvm_ffi::runtime::dtype::{from_string, to_string};
///
/// let dtype = from_string(b"float16x4")?;
/// assert_eq!((dtype.code, dtype.bits, dtype.lanes), (2, 16, 4));
/// assert_eq!(to_string(dtype)?, "float16x4");
/// assert!(from_string(b"float16x").is_err());
/// # Ok::<(), tvm_ffi::runtime::Error>(())
/// ```
pub mod dtype {
    pub use super::value::dtype::{from_string, to_string};
}

/// JSON text to values and back.
///
/// ```
/// use tvm_ffi::runtime::json::{parse, stringify};
///
/// let value = parse(br#"{"shape": [2, 3], "name": "w"}"#)?;
/// assert_eq!(stringify(value.view(), 0)?, r#"{"shape":[2,3],"name":"w"}"#);
/// assert!(parse(b"[1, 2").is_err());
/// # Ok::<(), tvm_ffi::runtime::Error>(())
/// ```
pub mod json {
    pub use super::value::json::{parse, stringify};
}
