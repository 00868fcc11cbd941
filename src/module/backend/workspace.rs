//! Workspaces (`TVMBackendAllocWorkspace`, `TVMBackendFreeWorkspace`), as
//! TVM's runtime gives them:
//!
//! - CPU (`kDLCPU`): memory aligned to 64 bytes (`kAllocAlignment`), from
//!   a pool of the calling thread, as TVM's: freed blocks are kept (whole
//!   pages) and reused, so a loop that allocates and frees a workspace per
//!   call allocates once; the thread's blocks are freed when it exits. A
//!   CPU workspace is freed on the thread that allocated it (TVM's rule);
//! - CUDA (`kDLCUDA`): device memory, stream-ordered on the stream the
//!   launches of that device use (`cuMemAllocAsync`/`cuMemFreeAsync`, so no
//!   call synchronises the device), or `cuMemAlloc` where the driver or the
//!   device has no memory pools;
//! - CUDA host (`kDLCUDAHost`): pinned host memory (`cuMemAllocHost`), as
//!   TVM's `device_api.cuda_host`;
//! - anything else, CUDA managed memory included (TVM has no device API for
//!   it either): an error naming the device type.
//!
//! Every live workspace is recorded with its device (CPU ones in their
//! thread's pool, the others in one table), so a free of anything else (a
//! foreign buffer, a function's address, a double free, a CUDA workspace
//! freed as CPU) is refused with TVM's words and frees nothing. No lock is
//! held while the driver runs.

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

/// CPU workspaces are whole pages (TVM's `kWorkspacePageSize`), so freed
/// blocks fit later requests.
const PAGE: usize = 4096;

/// A block of a thread's CPU pool.
struct Block {
    ptr: core::ptr::NonNull<u8>,
    layout: Layout,
    device_id: i32,
}

/// The CPU workspaces of one thread: the live ones (most recent last) and
/// the freed ones kept for reuse.
#[derive(Default)]
struct CpuPool {
    live: Vec<Block>,
    free: Vec<Block>,
}

impl CpuPool {
    /// A block of at least `bytes`: the smallest freed one that fits, else
    /// a new one.
    fn alloc(&mut self, device_id: i32, bytes: usize) -> Result<*mut c_void> {
        let fit = (0..self.free.len())
            .filter(|&i| self.free[i].layout.size() >= bytes)
            .min_by_key(|&i| self.free[i].layout.size());
        let mut block = match fit {
            Some(i) => self.free.swap_remove(i),
            None => {
                let size = bytes
                    .max(1)
                    .checked_next_multiple_of(PAGE)
                    .ok_or_else(|| too_large(bytes as u64))?;
                let layout =
                    Layout::from_size_align(size, ALIGN).map_err(|_| too_large(bytes as u64))?;
                // SAFETY: the layout's size is at least one page.
                let ptr = core::ptr::NonNull::new(unsafe { std::alloc::alloc(layout) })
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::MemoryError,
                            format!("cannot allocate a CPU workspace of {bytes} bytes"),
                        )
                    })?;
                Block {
                    ptr,
                    layout,
                    device_id,
                }
            }
        };
        block.device_id = device_id;
        let ptr = block.ptr.as_ptr().cast();
        self.live.push(block);
        Ok(ptr)
    }

    /// Takes back the live block at `ptr` of `device_id`, searched from the
    /// most recent; false if there is none.
    fn free(&mut self, device_id: i32, ptr: *mut c_void) -> bool {
        let found = self
            .live
            .iter()
            .rposition(|b| b.ptr.as_ptr().cast() == ptr && b.device_id == device_id);
        let Some(i) = found else { return false };
        let block = self.live.remove(i);
        self.free.push(block);
        true
    }
}

impl Drop for CpuPool {
    fn drop(&mut self) {
        for b in self.live.drain(..).chain(self.free.drain(..)) {
            // SAFETY: each block was allocated with its layout and is held
            // by this pool only.
            unsafe { std::alloc::dealloc(b.ptr.as_ptr(), b.layout) };
        }
    }
}

thread_local! {
    /// This thread's CPU workspaces.
    static CPU_POOL: std::cell::RefCell<CpuPool> = std::cell::RefCell::default();
}

/// How a live device workspace was allocated, so it is freed the same way.
#[derive(Clone, Copy)]
enum Made {
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

/// Live device workspaces by address.
static LIVE: LazyLock<Mutex<HashMap<usize, Live>>> = LazyLock::new(Default::default);

fn live() -> std::sync::MutexGuard<'static, HashMap<usize, Live>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A workspace of `size` bytes on the device (see the module docs).
pub fn alloc_workspace(device_type: i32, device_id: i32, size: u64) -> Result<*mut c_void> {
    let bytes = usize::try_from(size).map_err(|_| too_large(size))?;
    let (ptr, made) = match device_type {
        kDLCPU => {
            return CPU_POOL
                .try_with(|p| p.borrow_mut().alloc(device_id, bytes))
                .unwrap_or_else(|_| {
                    Err(Error::runtime(
                        "a CPU workspace asked for while the thread exits",
                    ))
                });
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

fn too_large(size: u64) -> Error {
    Error::value(format!("a workspace of {size} bytes is too large"))
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
    let refused = || {
        Error::value(format!(
            "TVMBackendFreeWorkspace: {ptr:p} is no live workspace of device ({device_type}, \
             {device_id}): trying to free things that has not been allocated"
        ))
    };
    if device_type == kDLCPU {
        let freed = CPU_POOL
            .try_with(|p| p.borrow_mut().free(device_id, ptr))
            .unwrap_or(false);
        return if freed { Ok(()) } else { Err(refused()) };
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
        return Err(refused());
    };
    match entry.made {
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

    #[test]
    fn cpu_workspaces_are_reused_on_their_thread() {
        let a = alloc_workspace(kDLCPU, 0, 1000).unwrap();
        let b = alloc_workspace(kDLCPU, 0, 5000).unwrap();
        assert_eq!(b as usize % ALIGN, 0);
        free_workspace(kDLCPU, 0, a).unwrap();
        // The freed page fits the next small request; a larger one does not.
        assert_eq!(alloc_workspace(kDLCPU, 0, 4096).unwrap(), a);
        let c = alloc_workspace(kDLCPU, 0, 4097).unwrap();
        assert!(c != a && c != b);
        // Another thread has no such workspace (TVM's rule).
        let b_addr = b as usize;
        std::thread::spawn(move || {
            let e = free_workspace(kDLCPU, 0, b_addr as *mut c_void).unwrap_err();
            assert!(e.to_string().contains("has not been allocated"), "{e}");
        })
        .join()
        .unwrap();
        for p in [a, c, b] {
            free_workspace(kDLCPU, 0, p).unwrap();
        }
    }
}
