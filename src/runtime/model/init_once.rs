//! `TVMFFIHandleInitOnce` / `TVMFFIHandleDeinitOnce`: a handle initialised
//! exactly once across threads.
#![forbid(unsafe_code)]

use crate::runtime::model::error::{Error, Result};
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

/// Serialises slow-path initialisations (rare by design).
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Runs `init` under the global lock unless `slot` is already set; a NULL
/// result is a `RuntimeError`; an `init` failure is passed through as is.
pub fn init_once(
    slot: &AtomicPtr<c_void>,
    init: impl FnOnce(&mut *mut c_void) -> c_int,
) -> Result<()> {
    if !slot.load(Ordering::Acquire).is_null() {
        return Ok(());
    }
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if !slot.load(Ordering::Acquire).is_null() {
        return Ok(());
    }
    let mut result = core::ptr::null_mut();
    let code = init(&mut result);
    if code != 0 {
        return Err(Error::passthrough(code));
    }
    if result.is_null() {
        return Err(Error::runtime("init_func must return a non-NULL handle"));
    }
    slot.store(result, Ordering::Release);
    Ok(())
}

/// Clears `slot` atomically and runs `deinit` on the old value if it was set.
pub fn deinit_once(slot: &AtomicPtr<c_void>, deinit: impl FnOnce(*mut c_void) -> c_int) -> c_int {
    let old = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
    if old.is_null() { 0 } else { deinit(old) }
}
