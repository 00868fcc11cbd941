//! [`Obj`]: one counted reference to an object, the handle every object
//! wrapper of this crate holds.

use crate::sys::{self, Handle};

/// One owned reference to an object.
pub(crate) struct Obj(Handle);

// SAFETY: reference counts are atomic; `Obj` gives no mutable access.
unsafe impl Send for Obj {}
// SAFETY: as above.
unsafe impl Sync for Obj {}

impl Obj {
    /// Takes over one reference.
    ///
    /// # Safety
    /// `h` is a live object and the caller gives up one reference to it.
    pub(crate) unsafe fn from_owned(h: Handle) -> Obj {
        Obj(h)
    }
    pub(crate) fn handle(&self) -> Handle {
        self.0
    }
    pub(crate) fn type_index(&self) -> i32 {
        // SAFETY: a live object starts with its header.
        unsafe { (*self.0.cast::<sys::ObjectHeader>()).type_index }
    }
    /// The bytes after the header (the object's cell).
    pub(crate) fn cell<T>(&self) -> *const T {
        // SAFETY: in bounds of a live object of a type with such a cell.
        unsafe {
            self.0
                .cast::<u8>()
                .add(size_of::<sys::ObjectHeader>())
                .cast()
        }
    }
}

impl Clone for Obj {
    fn clone(&self) -> Obj {
        // SAFETY: alive while `self` holds it.
        unsafe { sys::TVMFFIObjectIncRef(self.0) };
        Obj(self.0)
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        // SAFETY: we hold one reference.
        unsafe { sys::TVMFFIObjectDecRef(self.0) };
    }
}
