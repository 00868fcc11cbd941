//! Triton's compiled kernels, run through the CUDA driver with no Triton at
//! run time: `kernel` (one kernel, launched as the launcher of the release
//! that compiled it launches it) and the `triton` module kind, a module of
//! kernels by name. The cache entry's files are read by `format::triton_cache`,
//! below this wing (the inspector reads them without loading); the driver,
//! the per-device loads and the scratch allocations are the CUDA wing's and
//! the backend's. Artifacts reach it through `artifact::triton` (the loader
//! `ffi.Artifact.loader.triton`).
// Layers, lowest first: release (the launch rules of each Triton release), kernel, this module kind.

pub(crate) mod kernel;
pub(crate) mod release;

use crate::module::format::symbols::property;
use crate::module::objects::module::{Module, ModuleKind};
use crate::runtime::call::function::Function;
use crate::runtime::model::error::Result;
use kernel::TritonKernel;
use std::sync::Arc;

/// The `triton` module kind: kernels by their symbol.
pub struct TritonModule {
    kernels: Vec<Arc<TritonKernel>>,
}

impl TritonModule {
    /// A module of `kernels`.
    pub fn new(kernels: Vec<TritonKernel>) -> TritonModule {
        TritonModule {
            kernels: kernels.into_iter().map(Arc::new).collect(),
        }
    }

    fn find(&self, name: &str) -> Option<&Arc<TritonKernel>> {
        self.kernels.iter().find(|k| k.name() == name)
    }
}

impl ModuleKind for TritonModule {
    fn kind(&self) -> &str {
        "triton"
    }
    fn property_mask(&self) -> i64 {
        property::RUNNABLE
    }
    fn get_function(&self, _module: &Module, name: &str) -> Result<Option<Function>> {
        Ok(self.find(name).map(|k| {
            let k = k.clone();
            Function::from_closure(move |args| k.call(args))
        }))
    }
    fn implements_function(&self, _module: &Module, name: &str) -> Result<bool> {
        Ok(self.find(name).is_some())
    }
}
