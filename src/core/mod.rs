//! The safe runtime behind the C API, in five layers and a composer; each
//! layer uses only the ones below it (checked by `tests/layers.rs`):
//!
//! - [`model`]: objects, `Any`, strings, errors, the type table;
//! - [`call`]: functions, typed signatures, the global registry;
//! - [`value`]: containers, scalars, tensors, dtypes, JSON;
//! - [`reflect`]: fields, type definitions, the built-in reflected types;
//! - [`algo`]: copies, comparisons, hashing, visitors, serialization;
//! - [`builtins`]: the core's built-in globals and type descriptions, which
//!   the crate root composes with the module layer's.
//!
//! Nothing here is `extern "C"` except the callbacks stored in objects
//! (deleters, `safe_call` trampolines), which run through
//! [`boundary`](crate::core::model::boundary) like every exported entry
//! point. The items re-exported below are the ones callers outside the core
//! use most.
//!
//! Layers, lowest first: model, call, value, reflect, algo, builtins.

pub mod algo;
pub mod builtins;
pub mod call;
pub mod model;
pub mod reflect;
pub mod value;

pub use call::function::Function;
pub use model::any::{Any, AnyView};
pub use model::error::{Error, ErrorKind, Result};
pub use model::object::ObjectRef;
