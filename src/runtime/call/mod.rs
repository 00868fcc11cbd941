//! Calling: function objects (packed calls, closures, C callbacks), typed
//! signatures and conversions over them (`typed_fn!`), and the global
//! registry. It uses the object model.
// Layers, lowest first: function, signature, registry.

pub mod function;
pub mod registry;
pub mod signature;
