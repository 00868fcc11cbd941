//! Algorithms over reflected objects: deep copy, printing and comparison,
//! structural equality and hashing, visitors and mutators, serialization.
//! It uses every layer below.

pub mod deep_copy;
pub mod recursive;
pub mod serialization;
pub mod structural_equal;
pub mod structural_hash;
pub mod structural_key;
pub mod structural_mutate;
pub mod structural_visit;
pub(crate) mod traversal;
pub mod visit_error_context;
