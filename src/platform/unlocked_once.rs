//! Values computed once without a lock held while they are computed.
//!
//! `OnceLock::get_or_init` and `LazyLock` make every other thread wait
//! while the first computes. Where the computation calls the system loader
//! (`dlopen`, `dlsym`), that wait deadlocks: a library's constructor on
//! another thread holds the loader's lock and waits for the value, while
//! the computing thread waits for the loader's lock. These values are
//! computed by whoever needs them first, possibly by several threads at
//! once, and the first one stored is kept.
#![forbid(unsafe_code)]

use std::sync::OnceLock;

/// The value of `cell`, computed by `make` outside any lock if it is not
/// set yet (several threads may compute it; the first stored wins).
pub fn get_or_make<T: Clone>(cell: &OnceLock<T>, make: impl FnOnce() -> T) -> T {
    if let Some(value) = cell.get() {
        return value.clone();
    }
    // Another thread may have stored its value meanwhile: that one stays.
    let _ = cell.set(make());
    cell.get().cloned().expect("set above or by another thread")
}
