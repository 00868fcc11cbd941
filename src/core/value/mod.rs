//! Values: hashing and equality of `Any`, scalars and shapes, arrays and
//! lists, maps, tensors, dtypes, the environment (streams, allocators) and
//! JSON. It uses the object model and calling.

pub mod containers;
pub mod dtype;
pub mod env;
pub mod hash;
pub mod json;
pub mod map;
pub mod scalar;
pub mod seq;
pub mod tensor;
