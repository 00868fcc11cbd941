//! TVM's CUDA modules, run through the dlopened driver: `driver` (the CUDA
//! driver API, loaded at first use), `nvrtc` (NVRTC, loaded to compile CUDA
//! source), `module` (the `cuda` module kind: per-device lazy loads, TVM's
//! calling convention, and its loader `ffi.Module.load_from_bytes.cuda`).
//! Nothing here links against CUDA: without a driver, modules load and
//! inspect, and a launch fails with an error naming what is missing. The
//! blob and code formats are read by `format` (`cuda_blob`, `device_code`),
//! below this wing, because the inspector reads them without loading.
// Layers, lowest first: driver, loaded nvrtc, module.

pub(crate) mod driver;
pub(crate) mod loaded;
pub(crate) mod module;
pub(crate) mod nvrtc;

pub use module::CudaModule;
