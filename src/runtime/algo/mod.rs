//! Algorithms over reflected objects: deep copy, recursive comparison,
//! hashing and printing, structural equality and hashing (and
//! `StructuralKey`), visitors and mutators, JSON graph serialization. It
//! uses every layer of the core below it.
// Layers, lowest first: deep_copy recursive traversal visit_error_context, recursive_compare recursive_hash repr, serialization structural_equal structural_hash structural_visit, structural_key structural_mutate.

pub mod deep_copy;
pub mod recursive;
pub mod recursive_compare;
pub mod recursive_hash;
pub mod repr;
pub mod serialization;
pub mod structural_equal;
pub mod structural_hash;
pub mod structural_key;
pub mod structural_mutate;
pub mod structural_visit;
pub(crate) mod traversal;
pub mod visit_error_context;
