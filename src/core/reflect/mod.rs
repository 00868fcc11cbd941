//! Reflection: field accessors, type definitions with their methods and
//! attributes, the built-in reflected types, dataclasses. It uses the layers
//! below: the object model, calling and values.

pub mod dataclass;
pub mod field;
pub mod reflected;
pub mod type_def;
