//! The C functions TVM's generated host code reaches through its context
//! slots (`__TVMBackendAllocWorkspace`, ...), as TVM's runtime defines them.
//! They are not exported: the loader writes their addresses into a loaded
//! library's slots that no runtime registered ([`context_slots`], the one
//! list of the slots this runtime fills), so a TVM library runs with this
//! library alone, and TVM's own are used when `import tvm` registered them.

use super::args::{ffi_call, ffi_call_or};
use crate::module::backend::context::{Fillers, unknown_slot_name};
use crate::module::backend::{pool, workspace};
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
        workspace::alloc_workspace(device_type, device_id, size).unwrap_or_else(|e| {
            raise_code(e);
            core::ptr::null_mut()
        })
    })
}

/// `TVMBackendFreeWorkspace`: 0, or -1 with the error raised (a pointer
/// that is no live workspace of the device is refused, nothing freed).
pub extern "C" fn tvm_backend_free_workspace(
    device_type: c_int,
    device_id: c_int,
    ptr: *mut c_void,
) -> c_int {
    ffi_call(|| workspace::free_workspace(device_type, device_id, ptr))
}

/// `TVMBackendParallelLaunch`: runs `flambda` on `num_task` tasks (0:
/// every thread of the pool); 0, or -1 with the first failed task's error
/// raised.
///
/// # Safety
/// `flambda` may run with `cdata` on several threads at once until this
/// returns.
pub unsafe extern "C" fn tvm_backend_parallel_launch(
    flambda: Option<pool::Lambda>,
    cdata: *mut c_void,
    num_task: c_int,
) -> c_int {
    ffi_call(|| {
        let f = flambda.ok_or_else(|| Error::value("`flambda` is NULL"))?;
        // SAFETY: by the contract.
        unsafe { pool::launch(f, cdata, num_task) }
    })
}

/// `TVMBackendParallelBarrier`: waits for every task of the launch; 0.
///
/// # Safety
/// `penv` is the environment the launch handed to task `task_id`.
pub unsafe extern "C" fn tvm_backend_parallel_barrier(
    task_id: c_int,
    penv: *mut pool::GroupEnv,
) -> c_int {
    // SAFETY: by the contract.
    match unsafe { penv.as_ref() } {
        // SAFETY: by the contract.
        Some(env) => unsafe {
            pool::barrier(task_id, env);
            0
        },
        None => raise_code(Error::value("`penv` is NULL")),
    }
}

/// Every context slot this runtime fills, with what it writes there (TVM
/// 0.26 and 0.27 generate the first eight; 0.25 calls
/// `__TVMBackendGetFuncFromEnv`, which has the signature and meaning of
/// `TVMFFIEnvModLookupFromImports`), and the stubs for the others.
pub(crate) fn context_slots() -> Fillers {
    let known = vec![
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
            "__TVMBackendGetFuncFromEnv",
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
    ];
    Fillers {
        known,
        stubs: UNKNOWN_SLOT_STUBS
            .iter()
            .map(|f| *f as *const () as usize)
            .collect(),
    }
}

/// Raises the error of the `index`-th unknown context slot; -1.
fn unknown_slot(index: usize) -> c_int {
    ffi_call(|| {
        let name = unknown_slot_name(index);
        Err(Error::runtime(format!(
            "the library called {name}, a context symbol no runtime in this process provides \
             (TVM's runtime registers its own: `import tvm`)"
        )))
    })
}

/// One stub per unknown slot name: `$n` stubs, the `i`-th answering for
/// the `i`-th name (the last for any beyond).
macro_rules! unknown_slot_stubs {
    ($($i:literal)*) => {
        const UNKNOWN_SLOT_STUBS: &[extern "C" fn() -> c_int] = &[$({
            /// A context slot nobody provides: raises, returns -1.
            extern "C" fn stub() -> c_int {
                unknown_slot($i)
            }
            stub
        }),*];
    };
}

unknown_slot_stubs!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
    29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
    61 62 63);
