//! Workspaces (`TVMBackendAllocWorkspace`, `TVMBackendFreeWorkspace`), as
//! TVM's runtime gives them:
//!
//! - CPU (`kDLCPU`): memory aligned to 64 bytes (`kAllocAlignment`);
//! - CUDA (`kDLCUDA`): device memory, stream-ordered on the stream the
//!   launches of that device use (`cuMemAllocAsync`/`cuMemFreeAsync`, so no
//!   call synchronises the device), or `cuMemAlloc` where the driver or the
//!   device has no memory pools;
//! - CUDA host (`kDLCUDAHost`): pinned host memory (`cuMemAllocHost`), as
//!   TVM's `device_api.cuda_host`;
//! - anything else, CUDA managed memory included (TVM has no device API for
//!   it either): an error naming the device type.
//!
//! Every live workspace is recorded with its device, so a free of anything
//! else (a foreign buffer, a function's address, a double free, a CUDA
//! workspace freed as CPU) is refused with TVM's words and frees nothing.
//! No lock is held while the driver runs.

use crate::abi::*;
use crate::module::cuda::driver::{self, Driver};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::value::env;
use core::ffi::c_void;
use std::alloc::Layout;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// CPU workspaces are aligned like TVM's (`kAllocAlignment`).
const ALIGN: usize = 64;

/// How a live workspace was allocated, so it is freed the same way.
#[derive(Clone, Copy)]
enum Made {
    /// The global allocator, with this layout.
    Cpu(Layout),
    /// `cuMemAllocAsync` on this stream.
    CudaAsync(usize),
    /// `cuMemAlloc`.
    Cuda,
    /// `cuMemAllocHost`.
    CudaHost,
}

/// A live workspace: the device it was allocated for and how.
#[derive(Clone, Copy)]
struct Live {
    device_type: i32,
    device_id: i32,
    made: Made,
}

/// Live workspaces by address.
static LIVE: LazyLock<Mutex<HashMap<usize, Live>>> = LazyLock::new(Default::default);

fn live() -> std::sync::MutexGuard<'static, HashMap<usize, Live>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A workspace of `size` bytes on the device (see the module docs).
pub fn alloc_workspace(device_type: i32, device_id: i32, size: u64) -> Result<*mut c_void> {
    let too_large = || Error::value(format!("a workspace of {size} bytes is too large"));
    let bytes = usize::try_from(size).map_err(|_| too_large())?;
    let (ptr, made) = match device_type {
        kDLCPU => {
            let layout = Layout::from_size_align(bytes.max(1), ALIGN).map_err(|_| too_large())?;
            // SAFETY: the layout's size is at least 1.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                return Err(Error::new(
                    ErrorKind::MemoryError,
                    format!("cannot allocate a CPU workspace of {size} bytes"),
                ));
            }
            (p as usize, Made::Cpu(layout))
        }
        kDLCUDA => {
            let d = cuda_device(device_id)?;
            let stream = env::get_stream(kDLCUDA, device_id) as usize;
            match d.mem_alloc_async(bytes.max(1), stream)? {
                Some(p) => (p as usize, Made::CudaAsync(stream)),
                None => (d.mem_alloc(bytes.max(1))? as usize, Made::Cuda),
            }
        }
        kDLCUDAHost => {
            let d = cuda_device(device_id)?;
            (d.mem_alloc_host(bytes.max(1))? as usize, Made::CudaHost)
        }
        _ => return Err(unsupported("__TVMBackendAllocWorkspace", device_type)),
    };
    let entry = Live {
        device_type,
        device_id,
        made,
    };
    live().insert(ptr, entry);
    Ok(ptr as *mut c_void)
}

/// The driver, with `device_id`'s primary context current.
fn cuda_device(device_id: i32) -> Result<&'static Driver> {
    let d = driver::driver()?;
    d.set_device(device_id)?;
    Ok(d)
}

/// Frees a workspace [`alloc_workspace`] made for the same device; NULL is
/// a no-op. Anything else is refused and nothing is freed.
pub fn free_workspace(device_type: i32, device_id: i32, ptr: *mut c_void) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    let entry = {
        let mut table = live();
        match table.get(&(ptr as usize)) {
            Some(e) if e.device_type == device_type && e.device_id == device_id => {
                table.remove(&(ptr as usize))
            }
            _ => None,
        }
    };
    let Some(entry) = entry else {
        return Err(Error::value(format!(
            "TVMBackendFreeWorkspace: {ptr:p} is no live workspace of device ({device_type}, \
             {device_id}): trying to free things that has not been allocated"
        )));
    };
    match entry.made {
        Made::Cpu(layout) => {
            // SAFETY: allocated by `alloc_workspace` with this layout, and
            // removed from the table above, so freed once.
            unsafe { std::alloc::dealloc(ptr.cast(), layout) };
            Ok(())
        }
        Made::CudaAsync(stream) => driver::driver()?.mem_free_async(ptr as u64, stream),
        Made::Cuda => driver::driver()?.mem_free(ptr as u64),
        Made::CudaHost => driver::driver()?.mem_free_host(ptr as usize),
    }
}

fn unsupported(what: &str, device_type: i32) -> Error {
    let name = match device_type {
        kDLCUDAManaged => " (CUDA managed memory, for which TVM's runtime has no device API)",
        _ => "",
    };
    Error::value(format!(
        "{what}: device type {device_type}{name} is not supported by this runtime without TVM's \
         (CPU, CUDA and CUDA host are; `import tvm` provides the others)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_double_and_mismatched_frees_are_refused() {
        let p = alloc_workspace(kDLCPU, 0, 100).unwrap();
        assert_eq!(p as usize % ALIGN, 0);
        let mut foreign = [0u8; 16];
        for bad in [
            foreign.as_mut_ptr().cast::<c_void>(),
            alloc_workspace as *const () as *mut c_void,
        ] {
            let e = free_workspace(kDLCPU, 0, bad).unwrap_err().to_string();
            assert!(
                e.contains("trying to free things that has not been allocated"),
                "{e}"
            );
        }
        assert!(
            free_workspace(kDLCUDA, 0, p).is_err(),
            "a CPU workspace freed as CUDA"
        );
        assert!(
            free_workspace(kDLCPU, 1, p).is_err(),
            "freed on another device id"
        );
        free_workspace(kDLCPU, 0, p).unwrap();
        assert!(free_workspace(kDLCPU, 0, p).is_err(), "a double free");
        assert!(free_workspace(kDLCPU, 0, core::ptr::null_mut()).is_ok());
        let e = alloc_workspace(kDLCUDAManaged, 0, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("device type 13 (CUDA managed memory"), "{e}");
        assert!(alloc_workspace(kDLCPU, 0, u64::MAX).is_err());
    }
}
