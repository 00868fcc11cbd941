//! The safe runtime behind the C API. Nothing here is `extern "C"` except the
//! callbacks stored in objects (deleters, `safe_call` trampolines), which run
//! through [`boundary`](crate::core::model::boundary) like every exported
//! entry point.
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
