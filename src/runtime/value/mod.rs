//! Values: hashing and equality of `Any`, scalars, shapes and big integers,
//! arrays and lists, maps and dicts, tensors (DLPack), dtypes, the
//! environment (streams, allocators) and JSON, with their built-in globals.
//! It uses the object model and calling.
// Layers, lowest first: dtype hash tensor, env map scalar seq, containers json.

pub mod containers;
pub mod dtype;
pub mod env;
pub mod hash;
pub mod json;
pub mod map;
pub mod scalar;
pub mod seq;
pub mod tensor;
