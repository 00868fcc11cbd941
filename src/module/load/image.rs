//! A mapped shared library and what the fixed lookups of a load found in
//! it. An image stays mapped for good unless released: then the last
//! module or function from it queues it for the library's unload check
//! (`library::unload_released`), which closes it unless its code is still
//! in use.

use crate::module::backend::context::Slot;
use crate::platform::image;
use crate::platform::loader::Handle;
use crate::runtime::model::object::ObjectRef;
use core::ffi::c_void;
use core::mem::ManuallyDrop;
use core::ops::Range;
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A loaded shared library with what the fixed lookups of a load found in
/// it. It stays open for good unless released (`released`): then the last
/// module or function from it queues it in [`PENDING_UNLOADS`].
pub(super) struct Image {
    pub(super) handle: ManuallyDrop<Handle>,
    /// `(name, need_write)` to the symbol's address and the bytes from it in
    /// a readable (writable) loaded segment: the answers of [`Image::locate`].
    /// A failed `dlsym` formats a message (some 2,000 instructions) and the
    /// segment search walks every loaded object, while the image never
    /// changes. Only the fixed names a load looks up are kept (the tree, the
    /// context symbols), so the list stays short.
    located: Mutex<Vec<(String, bool, Located)>>,
    /// The address ranges of its loaded segments; empty for the main
    /// program, which is never released.
    pub(super) segments: Vec<Range<usize>>,
    /// Set when released (`library::release`).
    pub(super) released: AtomicBool,
    /// The functions `TVMFFIEnvModLookupFromImports` handed the library:
    /// it keeps their handles in its own variables (TVM's host code
    /// does), which live as long as the image, beyond the module whose
    /// lookup cache owned them when the same file is loaded again.
    pub(super) looked_up: Mutex<Vec<ObjectRef>>,
    /// Its context slots, found once (`context`).
    pub(super) slots: OnceLock<Vec<Slot>>,
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: `handle` is taken once, here, and never used again.
        let handle = unsafe { ManuallyDrop::take(&mut self.handle) };
        let looked_up = core::mem::take(&mut *lock(&self.looked_up));
        if self.released.load(Ordering::Acquire) {
            let segments = core::mem::take(&mut self.segments);
            lock(&PENDING_UNLOADS).push((handle, segments, looked_up));
        } else {
            keep_mapped(handle, looked_up);
        }
    }
}

/// Libraries that stay mapped for good: their handles are never closed,
/// and kept here so nothing they hold (a private copy, the name they were
/// opened by) is lost.
static KEPT: Mutex<Vec<(Handle, Vec<ObjectRef>)>> = Mutex::new(Vec::new());

/// Keeps `handle` open for the life of the process, with the functions its
/// variables may hold.
pub(super) fn keep_mapped(handle: Handle, looked_up: Vec<ObjectRef>) {
    lock(&KEPT).push((handle, looked_up));
}

/// Released images no module or function uses any more, with their
/// segments: checked and closed by `library::unload_released`.
static PENDING_UNLOADS: Mutex<Vec<Unload>> = Mutex::new(Vec::new());

/// A released image waiting to be closed: its handle, segments, and the
/// functions it looked up (released before it closes).
pub(super) type Unload = (Handle, Vec<Range<usize>>, Vec<ObjectRef>);

/// The images waiting to be closed, taken.
pub(super) fn take_pending() -> Vec<Unload> {
    core::mem::take(&mut *lock(&PENDING_UNLOADS))
}

/// Takes a library the loader mapped and then refused: it is closed by the
/// next unload check unless a value its initialisers registered runs code
/// in it.
pub(super) fn discard(handle: Handle) {
    let segments = handle.segments();
    lock(&PENDING_UNLOADS).push((handle, segments, Vec::new()));
}

/// Locks a table whose every change leaves it valid (so a poisoned lock is
/// reusable).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A symbol's address, and how many bytes from it lie in a readable (or
/// writable) loaded segment, if any does.
pub(super) type Located = Option<(usize, Option<usize>)>;

impl Image {
    /// An image over an open library; only a `releasable` one records its
    /// segments (the main program's is not).
    pub(super) fn new(handle: Handle, releasable: bool) -> Arc<Image> {
        let segments = if releasable {
            handle.segments()
        } else {
            Vec::new()
        };
        Arc::new(Image {
            handle: ManuallyDrop::new(handle),
            located: Mutex::new(Vec::new()),
            segments,
            released: AtomicBool::new(false),
            looked_up: Mutex::new(Vec::new()),
            slots: OnceLock::new(),
        })
    }

    /// The address of `name`, if present.
    pub(super) fn get(&self, name: &str) -> Option<*mut c_void> {
        // SAFETY: we only take the address; callers cast it to the type the
        // TVM-FFI symbol convention gives that name.
        let sym = unsafe { self.handle.lib().get::<*mut c_void>(name.as_bytes()) }.ok()?;
        // SAFETY: reading the symbol's address, not calling it.
        unsafe { sym.try_as_raw_ptr() }
    }

    /// [`Image::get`] and the extent of the segment holding the symbol,
    /// looked up once per image. The lookup itself runs unlocked: `dlsym`
    /// and the segment walk take the system loader's locks, which a library
    /// initialiser loading this same image already holds.
    pub(super) fn locate(&self, name: &str, need_write: bool) -> Located {
        let cached = |located: &[(String, bool, Located)]| {
            located
                .iter()
                .find(|(n, w, _)| *w == need_write && n == name)
                .map(|(.., found)| *found)
        };
        if let Some(found) = cached(&lock(&self.located)) {
            return found;
        }
        let found = self
            .get(name)
            .map(|addr| (addr as usize, image::mapped_extent(addr, need_write)));
        let mut located = lock(&self.located);
        if cached(&located).is_none() {
            located.push((name.to_string(), need_write, found));
        }
        found
    }
}
