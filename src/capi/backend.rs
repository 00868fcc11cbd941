//! The C functions TVM's generated host code reaches through its context
//! slots (`__TVMBackendAllocWorkspace`, ...), as TVM's runtime defines them.
//! They are not exported: the loader writes their addresses into a loaded
//! library's slots that no runtime registered (`CONTEXT_DEFAULTS`), so a
//! TVM library runs with this library alone, and TVM's own are used when
//! `import tvm` registered them.

use super::args::{ffi_call, ffi_call_or};
use crate::module::device::{parallel, services};
use crate::runtime::model::boundary::raise_code;
use crate::runtime::model::error::Error;
use core::ffi::{c_int, c_void};

/// `TVMBackendAllocWorkspace`: `size` bytes on the device (CPU memory
/// aligned to 64 bytes, or CUDA device memory); NULL with the error raised
/// on failure.
///
/// # Safety
/// Callable from any thread; the result is freed with
/// [`tvm_backend_free_workspace`] on the same device.
pub unsafe extern "C" fn tvm_backend_alloc_workspace(
    device_type: c_int,
    device_id: c_int,
    size: u64,
    _dtype_code_hint: c_int,
    _dtype_bits_hint: c_int,
) -> *mut c_void {
    ffi_call_or(core::ptr::null_mut(), || {
        services::alloc_workspace(device_type, device_id, size).unwrap_or_else(|e| {
            raise_code(e);
            core::ptr::null_mut()
        })
    })
}

/// `TVMBackendFreeWorkspace`: 0, or -1 with the error raised.
///
/// # Safety
/// `ptr` is NULL or came from [`tvm_backend_alloc_workspace`] with the same
/// device, freed once.
pub unsafe extern "C" fn tvm_backend_free_workspace(
    device_type: c_int,
    device_id: c_int,
    ptr: *mut c_void,
) -> c_int {
    // SAFETY: by the contract.
    ffi_call(|| unsafe { services::free_workspace(device_type, device_id, ptr) })
}

/// `TVMBackendParallelLaunch`: runs `flambda` on `num_task` tasks (0:
/// every thread of the pool); 0, or -1 with the first failed task's error
/// raised.
///
/// # Safety
/// `flambda` may run with `cdata` on several threads at once until this
/// returns.
pub unsafe extern "C" fn tvm_backend_parallel_launch(
    flambda: Option<parallel::Lambda>,
    cdata: *mut c_void,
    num_task: c_int,
) -> c_int {
    ffi_call(|| {
        let f = flambda.ok_or_else(|| Error::value("`flambda` is NULL"))?;
        // SAFETY: by the contract.
        unsafe { parallel::launch(f, cdata, num_task) }
    })
}

/// `TVMBackendParallelBarrier`: waits for every task of the launch; 0.
///
/// # Safety
/// `penv` is the environment the launch handed to task `task_id`.
pub unsafe extern "C" fn tvm_backend_parallel_barrier(
    task_id: c_int,
    penv: *mut parallel::GroupEnv,
) -> c_int {
    // SAFETY: by the contract.
    match unsafe { penv.as_ref() } {
        // SAFETY: by the contract.
        Some(env) => unsafe {
            parallel::barrier(task_id, env);
            0
        },
        None => raise_code(Error::value("`penv` is NULL")),
    }
}

/// The context slots the loader fills when no runtime registered them, with
/// what it writes there: TVM's runtime registers these eight.
pub(crate) fn context_defaults() -> [(&'static str, usize); 8] {
    [
        (
            "__TVMFFIFunctionCall",
            super::function::TVMFFIFunctionCall as *const () as usize,
        ),
        (
            "__TVMFFIErrorSetRaisedFromCStr",
            super::error::TVMFFIErrorSetRaisedFromCStr as *const () as usize,
        ),
        (
            "__TVMFFIEnvModLookupFromImports",
            super::env::TVMFFIEnvModLookupFromImports as *const () as usize,
        ),
        (
            "__TVMFFIHandleInitOnce",
            super::init_once::TVMFFIHandleInitOnce as *const () as usize,
        ),
        (
            "__TVMBackendAllocWorkspace",
            tvm_backend_alloc_workspace as *const () as usize,
        ),
        (
            "__TVMBackendFreeWorkspace",
            tvm_backend_free_workspace as *const () as usize,
        ),
        (
            "__TVMBackendParallelLaunch",
            tvm_backend_parallel_launch as *const () as usize,
        ),
        (
            "__TVMBackendParallelBarrier",
            tvm_backend_parallel_barrier as *const () as usize,
        ),
    ]
}

/// Raises the error of the `index`-th missing context slot; -1.
fn missing_slot(index: usize) -> c_int {
    ffi_call(|| {
        let name = crate::module::load::library::missing_slot_name(index);
        Err(Error::runtime(format!(
            "the library called {name}, a context symbol no runtime in this process provides \
             (TVM's runtime registers its own: `import tvm`)"
        )))
    })
}

macro_rules! missing_slot_stubs {
    ($($i:literal => $f:ident),*) => {
        $(
            /// A context slot nobody provides: raises, returns -1.
            extern "C" fn $f() -> c_int {
                missing_slot($i)
            }
        )*
        /// The stubs the loader writes into a TVM library's context slots
        /// that nobody provides, one per slot name (the last for any beyond).
        pub(crate) fn missing_slot_stubs() -> [usize; 8] {
            [$($f as *const () as usize),*]
        }
    };
}

missing_slot_stubs!(0 => missing0, 1 => missing1, 2 => missing2, 3 => missing3,
    4 => missing4, 5 => missing5, 6 => missing6, 7 => missing7);
