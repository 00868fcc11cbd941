//! The safe runtime behind the C API. Nothing here is `extern "C"` except the
//! callbacks stored in objects (deleters, `safe_call` trampolines), which run
//! through [`boundary`](crate::core::boundary) like every exported entry point.

pub mod allocator;
pub mod any;
pub mod backtrace;
pub mod boundary;
pub mod builtins;
pub mod containers;
pub mod dataclass;
pub mod deep_copy;
pub mod dtype;
pub mod env;
pub mod error;
pub mod field;
pub mod function;
pub mod hash;
pub mod init_once;
pub mod json;
pub mod lineage;
pub mod map;
pub mod object;
pub mod recursive;
pub mod reflected;
pub mod registry;
pub mod scalar;
pub mod seq;
pub mod serialization;
pub mod signature;
pub mod stack;
pub mod string;
pub mod structural_equal;
pub mod structural_hash;
pub mod structural_mutate;
pub mod structural_visit;
pub mod tensor;
pub(crate) mod traversal;
pub mod type_def;
pub mod type_table;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod unwind;
pub mod visit_error_context;

pub use any::{Any, AnyView};
pub use error::{Error, ErrorKind, Result};
pub use function::Function;
pub use object::ObjectRef;
