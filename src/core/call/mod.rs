//! Calling: function objects, typed signatures over them, and the global
//! registry. It uses the object model.

pub mod function;
pub mod registry;
pub mod signature;
