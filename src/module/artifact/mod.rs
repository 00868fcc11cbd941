//! Artifacts: compiled code and data (host code, device binaries, graphs,
//! weights) with names and metadata, gathered into sets; loaded explicitly
//! into module trees, exported as libraries and as Model Library Format,
//! inspected without running. It uses the rest of the module layer.
// Layers, lowest first: params, set, set_record cuda triton, mlf, native, bootstrap, load, export, inspect.

pub(crate) mod bootstrap;
pub mod cuda;
pub mod export;
pub mod inspect;
pub mod load;
pub mod mlf;
pub mod native;
pub mod params;
pub mod set;
pub mod set_record;
pub mod triton;

pub use set::{Artifact, ArtifactBuilder, ArtifactSet};
