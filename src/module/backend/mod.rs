//! What TVM's generated host code calls at run time besides the FFI, as
//! TVM's runtime defines it: the parallel thread pool (`pool`), workspaces
//! (`workspace`: CPU memory, or CUDA memory through the driver), device
//! selection (`device`: `__tvm_set_device`), and the context slots through
//! which a loaded library reaches all of these (`context`: which slots
//! exist, what fills each, the stubs for unknown ones). The C functions the
//! slots point to live in `capi::backend`; TVM's own are used where
//! `import tvm` registered them.
// Layers, lowest first: pool, workspace, device, context.

pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod pool;
pub(crate) mod workspace;
