//! `TVMFFIHandleInitOnce` / `TVMFFIHandleDeinitOnce`: a handle initialised
//! exactly once across threads.
//!
//! Each handle being initialised has its own lock, so an `init_func` that
//! initialises another handle runs on (the reference's one lock for every
//! handle hangs there), and one that initialises its own handle again gets
//! an error instead of waiting on itself. The table of those locks is held
//! only to find or drop an entry, never while `init_func` runs.
#![forbid(unsafe_code)]

use crate::runtime::model::depth::thread_mark;
use crate::runtime::model::error::{Error, Result};
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// The lock of one handle being initialised, and the thread initialising it.
#[derive(Default)]
struct SlotLock {
    lock: Mutex<()>,
    /// [`thread_mark`] of the thread running `init_func`, 0 when none.
    owner: AtomicUsize,
}

/// The handles being initialised (or waited for) now, by address.
static BUSY: LazyLock<Mutex<HashMap<usize, Arc<SlotLock>>>> = LazyLock::new(Default::default);

/// Locks a mutex whose every change leaves its value valid.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `init` under the handle's own lock unless `slot` is already set; a
/// NULL result is a `RuntimeError`; an `init` failure is passed through as
/// is.
pub fn init_once(
    slot: &AtomicPtr<c_void>,
    init: impl FnOnce(&mut *mut c_void) -> c_int,
) -> Result<()> {
    if !slot.load(Ordering::Acquire).is_null() {
        return Ok(());
    }
    let key = slot as *const AtomicPtr<c_void> as usize;
    let entry = lock(&BUSY).entry(key).or_default().clone();
    let outcome = init_locked(slot, &entry, init);
    let mut busy = lock(&BUSY);
    // Entries are cloned only under BUSY: two references are the table's
    // and this one, so no other thread waits for this handle.
    if Arc::strong_count(&entry) == 2 {
        busy.remove(&key);
    }
    outcome
}

/// The slow path of [`init_once`], under the handle's lock `entry`.
fn init_locked(
    slot: &AtomicPtr<c_void>,
    entry: &SlotLock,
    init: impl FnOnce(&mut *mut c_void) -> c_int,
) -> Result<()> {
    let me = thread_mark();
    if entry.owner.load(Ordering::Relaxed) == me {
        return Err(Error::runtime(
            "TVMFFIHandleInitOnce: the init_func of this handle asked to initialise the same \
             handle again (it would wait for itself)",
        ));
    }
    let _guard = lock(&entry.lock);
    if !slot.load(Ordering::Acquire).is_null() {
        return Ok(());
    }
    entry.owner.store(me, Ordering::Relaxed);
    let mut result = core::ptr::null_mut();
    let code = init(&mut result);
    entry.owner.store(0, Ordering::Relaxed);
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
