//! What TVM's generated host code calls at run time besides the FFI, as
//! TVM's runtime defines it: workspaces (`__TVMBackendAllocWorkspace`,
//! `__TVMBackendFreeWorkspace`: CPU memory aligned to 64 bytes, or CUDA
//! device memory through the driver) and the global `__tvm_set_device`.
//! The C entry points over these live in `capi::backend`; the loader fills
//! a library's context slots with them unless a runtime registered its own
//! (`import tvm` does: TVM's are then used).

use crate::abi::*;
use crate::module::device::cuda_module::CudaModule;
use crate::module::device::driver;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::Described;
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, str_bytes_of};
use core::ffi::c_void;
use std::alloc::Layout;

/// CPU workspaces are aligned like TVM's (`kAllocAlignment`); the size is
/// kept in the alignment's worth of bytes before the block.
const ALIGN: usize = 64;

fn is_cuda(device_type: i32) -> bool {
    matches!(device_type, kDLCUDA | kDLCUDAHost | kDLCUDAManaged)
}

/// A workspace of `size` bytes on the device.
pub fn alloc_workspace(device_type: i32, device_id: i32, size: u64) -> Result<*mut c_void> {
    if device_type == kDLCPU {
        let total = usize::try_from(size)
            .ok()
            .and_then(|s| s.checked_add(ALIGN))
            .and_then(|t| Layout::from_size_align(t, ALIGN).ok())
            .ok_or_else(|| Error::value(format!("a CPU workspace of {size} bytes is too large")))?;
        // SAFETY: the layout's size is at least ALIGN, never zero.
        let base = unsafe { std::alloc::alloc(total) };
        if base.is_null() {
            return Err(Error::new(
                crate::runtime::model::error::ErrorKind::MemoryError,
                format!("cannot allocate a CPU workspace of {size} bytes"),
            ));
        }
        // SAFETY: `base` holds `ALIGN + size` bytes, 64-byte aligned.
        unsafe {
            base.cast::<usize>().write(total.size());
            return Ok(base.add(ALIGN).cast());
        }
    }
    if is_cuda(device_type) {
        let d = driver::driver()?;
        d.set_device(device_id)?;
        let size = usize::try_from(size)
            .map_err(|_| Error::value(format!("a workspace of {size} bytes is too large")))?;
        return Ok(d.mem_alloc(size.max(1))? as usize as *mut c_void);
    }
    Err(unsupported("__TVMBackendAllocWorkspace", device_type))
}

/// Frees a workspace [`alloc_workspace`] made.
///
/// # Safety
/// `ptr` came from `alloc_workspace` with the same device and is freed once.
pub unsafe fn free_workspace(device_type: i32, _device_id: i32, ptr: *mut c_void) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    if device_type == kDLCPU {
        // SAFETY: by the contract, ALIGN bytes before `ptr` start the block,
        // whose first word is its size.
        unsafe {
            let base = ptr.cast::<u8>().sub(ALIGN);
            let total = base.cast::<usize>().read();
            std::alloc::dealloc(base, Layout::from_size_align_unchecked(total, ALIGN));
        }
        return Ok(());
    }
    if is_cuda(device_type) {
        return driver::driver()?.mem_free(ptr as usize as u64);
    }
    Err(unsupported("__TVMBackendFreeWorkspace", device_type))
}

fn unsupported(what: &str, device_type: i32) -> Error {
    Error::value(format!(
        "{what}: device type {device_type} is not supported by this runtime without TVM's \
         (CPU and CUDA are; `import tvm` provides the others)"
    ))
}

/// `__tvm_set_device(device_type, device_id)`: makes the device current
/// (CUDA: its primary context, as `cudaSetDevice`); a no-op for the CPU.
fn set_device(device_type: i64, device_id: i64) -> Result<()> {
    let device_type = i32::try_from(device_type).unwrap_or(-1);
    if device_type == kDLCPU {
        return Ok(());
    }
    if is_cuda(device_type) {
        let id = i32::try_from(device_id)
            .map_err(|_| Error::value(format!("__tvm_set_device: device id {device_id}")))?;
        return driver::driver()?.set_device(id);
    }
    Err(unsupported("__tvm_set_device", device_type))
}

/// Registers the globals of this wing. `__tvm_set_device` and
/// `ffi.Module.load_from_bytes.cuda` yield to a registration of the same
/// name (TVM's runtime registers both when imported); `ffi.Artifact.loader.cuda`
/// is ours.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.yielding(Described::packed(
        "__tvm_set_device",
        Function::from_closure(|args| {
            args.expect_len("__tvm_set_device", 2)?;
            let ty = args.get(0).as_i64();
            let id = args.get(1).as_i64();
            match (ty, id) {
                (Some(t), Some(i)) => set_device(t, i).map(|()| Any::NONE),
                _ => Err(Error::type_error(
                    "__tvm_set_device takes (device_type: int, device_id: int)",
                )),
            }
        }),
    ));
    g.yielding(Described::packed(
        "ffi.Module.load_from_bytes.cuda",
        Function::from_closure(|args| {
            args.expect_len("ffi.Module.load_from_bytes.cuda", 1)?;
            let bytes = str_bytes_of(args.get(0), TextKind::Bytes)
                .ok_or_else(|| Error::type_error("ffi.Module.load_from_bytes.cuda takes bytes"))?;
            Ok(Any::from(CudaModule::load_from_bytes(bytes)?.into_object()))
        }),
    ));
}
