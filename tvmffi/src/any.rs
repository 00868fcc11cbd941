//! [`Any`], an owned TVM-FFI value, and [`AnyView`], a borrowed one.

use crate::handle::Obj;
use crate::sys::{self, RawAny};
use core::mem::ManuallyDrop;

/// An owned value of any TVM-FFI type: `None`, a scalar, a string or an
/// object (whose reference it holds and releases when dropped).
pub struct Any(RawAny);

/// A borrowed value: what a function receives as an argument.
#[derive(Clone, Copy)]
pub struct AnyView<'a>(&'a RawAny);

// SAFETY: object reference counts are atomic in every TVM-FFI runtime, and
// an `Any` gives no mutable access to what it refers to.
unsafe impl Send for Any {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for Any {}

impl Any {
    /// `None`.
    pub const fn none() -> Any {
        Any(RawAny::NONE)
    }
    /// Takes over a value that holds its own reference.
    ///
    /// # Safety
    /// `raw` is a valid owned `TVMFFIAny` (an object in it carries one
    /// reference that now belongs to the `Any`).
    pub(crate) unsafe fn from_raw(raw: RawAny) -> Any {
        Any(raw)
    }
    /// Gives up the value with its reference.
    pub(crate) fn into_raw(self) -> RawAny {
        let raw = self.0;
        core::mem::forget(self);
        raw
    }
    /// The value as a borrowed view.
    pub fn view(&self) -> AnyView<'_> {
        AnyView(&self.0)
    }
    /// Its type index.
    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }
    /// Its type key (`int`, `ffi.String`, `my.Point`, ...).
    pub fn type_key(&self) -> String {
        self.view().type_key()
    }
    pub(crate) fn raw(&self) -> &RawAny {
        &self.0
    }
    /// The value holding a new reference.
    pub(crate) fn from_obj(obj: &Obj) -> Any {
        let raw = RawAny {
            type_index: obj.type_index(),
            small_len: 0,
            bits: obj.handle() as u64,
        };
        // SAFETY: `raw` names a live object; the clone takes its reference.
        let borrowed = ManuallyDrop::new(unsafe { Any::from_raw(raw) });
        Any::clone(&borrowed)
    }
    /// The value, giving up this reference.
    pub(crate) fn from_owned_obj(obj: Obj) -> Any {
        let raw = RawAny {
            type_index: obj.type_index(),
            small_len: 0,
            bits: obj.handle() as u64,
        };
        core::mem::forget(obj);
        // SAFETY: our reference moves into the value.
        unsafe { Any::from_raw(raw) }
    }
}

impl Drop for Any {
    fn drop(&mut self) {
        if self.0.type_index >= sys::OBJECT_BEGIN {
            // SAFETY: an owned object value holds one reference.
            unsafe { sys::TVMFFIObjectDecRef(self.0.bits as sys::Handle) };
        }
    }
}

impl Clone for Any {
    fn clone(&self) -> Any {
        if self.0.type_index >= sys::OBJECT_BEGIN {
            // SAFETY: the object is alive while `self` holds it.
            unsafe { sys::TVMFFIObjectIncRef(self.0.bits as sys::Handle) };
        }
        Any(self.0)
    }
}

impl Default for Any {
    fn default() -> Any {
        Any::none()
    }
}

impl<'a> AnyView<'a> {
    /// A view of a value the caller keeps alive for `'a`.
    pub(crate) fn new(raw: &'a RawAny) -> AnyView<'a> {
        AnyView(raw)
    }
    /// Its type index.
    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }
    /// Its type key.
    pub fn type_key(&self) -> String {
        crate::types::type_key_of(self.0.type_index)
    }
    /// An owned copy (a new reference to an object; a raw C string or byte
    /// array becomes a String or Bytes).
    pub fn to_owned(&self) -> crate::error::Result<Any> {
        let mut out = RawAny::NONE;
        // SAFETY: `self.0` is a valid value for `'a`; `out` is writable.
        let rc = unsafe { sys::TVMFFIAnyViewToOwnedAny(self.0, &mut out) };
        crate::error::check(rc)?;
        // SAFETY: the runtime handed us an owned value.
        Ok(unsafe { Any::from_raw(out) })
    }
    pub(crate) fn raw(&self) -> &'a RawAny {
        self.0
    }
    /// A new reference to the object it holds, if any.
    pub(crate) fn new_ref(&self) -> Option<Obj> {
        let h = self.object()?;
        // SAFETY: the view keeps the object alive during this call; the
        // new reference is the `Obj`'s.
        unsafe { sys::TVMFFIObjectIncRef(h) };
        // SAFETY: as above.
        Some(unsafe { Obj::from_owned(h) })
    }
    /// The object it holds, if any.
    pub(crate) fn object(&self) -> Option<sys::Handle> {
        (self.0.type_index >= sys::OBJECT_BEGIN && self.0.bits != 0)
            .then_some(self.0.bits as sys::Handle)
    }
}
