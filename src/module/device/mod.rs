//! Running compiled code: the CUDA driver and NVRTC, both dlopened at first
//! use (`driver`, `nvrtc`); TVM's CUDA modules (`cuda_module`: kind `cuda`,
//! read and written as TVM 0.27 does, kernels with TVM's calling
//! convention); and what TVM's generated host code calls at run time:
//! workspaces and `__tvm_set_device` (`services`), the parallel thread pool
//! (`parallel`). Nothing here links against CUDA: without a driver, modules
//! load and inspect, and a launch fails with an error naming what is
//! missing.
// Layers, lowest first: driver parallel, nvrtc, cuda_module, services.

pub mod cuda_module;
pub(crate) mod driver;
pub mod nvrtc;
pub mod parallel;
pub mod services;
