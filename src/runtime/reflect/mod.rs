//! Reflection: field accessors, type definitions (fields, methods,
//! attributes), the built-in reflected types and their layouts, and
//! dataclasses. It uses the object model, calling and values.
// Layers, lowest first: field, dataclass type_def, reflected.

pub mod dataclass;
pub mod field;
pub mod reflected;
pub mod type_def;
