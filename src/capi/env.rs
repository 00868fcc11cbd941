//! `TVMFFIEnv*` (declared in `tvm/ffi/extra/c_env_api.h`).

use super::{arg_cstr, ffi_call};
use crate::core::env;
use core::ffi::{c_char, c_int, c_void};

/// A device stream handle (e.g. `cudaStream_t`).
pub type TVMFFIStreamHandle = *mut c_void;

/// Sets this thread's current stream for a device; the previous one is
/// written to `opt_out_original_stream` when it is not NULL. Streams are
/// per thread: a kernel called on this thread sees what its caller set.
///
/// # Safety
/// `opt_out_original_stream` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvSetStream(
    device_type: i32,
    device_id: i32,
    stream: TVMFFIStreamHandle,
    opt_out_original_stream: *mut TVMFFIStreamHandle,
) -> c_int {
    let old = env::set_stream(device_type, device_id, stream);
    if !opt_out_original_stream.is_null() {
        // SAFETY: checked non-null; writable per the contract.
        unsafe { opt_out_original_stream.write(old) };
    }
    0
}

/// This thread's current stream for a device, NULL if none was set.
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIEnvGetStream(device_type: i32, device_id: i32) -> TVMFFIStreamHandle {
    env::get_stream(device_type, device_id)
}

/// Asks the frontend (e.g. Python) whether a signal arrived. Returns 0 if
/// not (or if no frontend registered `PyErr_CheckSignals`), -1 if the
/// frontend raised an error of its own (no FFI error is set).
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIEnvCheckSignals() -> c_int {
    env::check_signals()
}

/// Registers a frontend function: `PyErr_CheckSignals`,
/// `PyGILState_Ensure` or `PyGILState_Release`.
/// Errors: ValueError "Unknown env API name" for other names or NULL `name`.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `symbol` has the named signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvRegisterCAPI(name: *const c_char, symbol: *mut c_void) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        unsafe { env::register_capi(arg_cstr(name, "name")?, symbol) }
    })
}
