//! `TVMFFIHandleInitOnce` / `TVMFFIHandleDeinitOnce`.

use super::args::{ffi_call, null_arg};
use crate::runtime::model::boundary::failed_call;
use crate::runtime::model::init_once::{deinit_once, init_once};
use core::ffi::{c_int, c_void};
use core::sync::atomic::AtomicPtr;

/// Initialises `*handle_addr` exactly once across threads: if it is NULL,
/// `init_func` runs under the handle's own lock and its result is published.
/// Errors: RuntimeError "init_func must return a non-NULL handle", and
/// when `init_func` initialises the same handle again; an
/// `init_func` failure is passed through (one that raised nothing raises a
/// RuntimeError, -2 excepted: see `failed_call`); ValueError for NULL
/// arguments.
///
/// # Safety
/// `handle_addr` is NULL or an aligned pointer slot shared only through these
/// two functions; `init_func` follows the C convention.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIHandleInitOnce(
    handle_addr: *mut *mut c_void,
    init_func: Option<unsafe extern "C" fn(result: *mut *mut c_void) -> c_int>,
) -> c_int {
    ffi_call(|| {
        if handle_addr.is_null() {
            return Err(null_arg("handle_addr"));
        }
        let init = init_func.ok_or_else(|| null_arg("init_func"))?;
        // SAFETY: an aligned pointer slot accessed atomically by all parties.
        let slot = unsafe { AtomicPtr::from_ptr(handle_addr) };
        // SAFETY: `init` follows the C convention.
        init_once(slot, |out| unsafe { init(out) })
    })
}

/// Atomically clears `*handle_addr` and, if it was set, calls
/// `deinit_func` on the old value, returning its result (a failure that
/// raised nothing raises a RuntimeError, see `failed_call`).
/// Errors: ValueError for NULL arguments.
///
/// # Safety
/// As for `TVMFFIHandleInitOnce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIHandleDeinitOnce(
    handle_addr: *mut *mut c_void,
    deinit_func: Option<unsafe extern "C" fn(handle: *mut c_void) -> c_int>,
) -> c_int {
    let (Some(deinit), false) = (deinit_func, handle_addr.is_null()) else {
        return ffi_call(|| {
            Err(null_arg(if handle_addr.is_null() {
                "handle_addr"
            } else {
                "deinit_func"
            }))
        });
    };
    // SAFETY: as in `TVMFFIHandleInitOnce`.
    let slot = unsafe { AtomicPtr::from_ptr(handle_addr) };
    // SAFETY: `deinit` follows the C convention.
    match deinit_once(slot, |h| unsafe { deinit(h) }) {
        0 => 0,
        code => failed_call(code),
    }
}
