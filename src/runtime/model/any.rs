//! [`Any`], an owned `TVMFFIAny`, and [`AnyView`], a borrowed one.

use crate::abi::*;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{ObjectRef, dec_ref, inc_ref};
use core::ffi::c_void;
use core::ptr::NonNull;

/// Whether `type_index` denotes a reference counted object.
#[inline]
pub fn is_object_index(type_index: i32) -> bool {
    type_index >= kTVMFFIStaticObjectBegin
}

/// An owned value: holds one strong reference when it carries an object.
#[repr(transparent)]
pub struct Any(TVMFFIAny);

// SAFETY: the value is either plain data or a reference counted object,
// which is `Send`/`Sync` like `ObjectRef`.
unsafe impl Send for Any {}
// SAFETY: see `Send`.
unsafe impl Sync for Any {}

impl Any {
    /// The None value.
    pub const NONE: Any = Any(TVMFFIAny::NONE);

    /// Takes over a raw value, including its object reference if any.
    ///
    /// # Safety
    /// `raw` is an owned value: if it holds an object, the caller transfers
    /// one strong reference; it is not a borrowed-only kind (raw string,
    /// byte-array pointer, r-value reference).
    #[inline]
    pub unsafe fn from_raw(raw: TVMFFIAny) -> Self {
        Any(raw)
    }

    /// Gives up ownership of the raw value.
    #[inline]
    pub fn into_raw(self) -> TVMFFIAny {
        core::mem::ManuallyDrop::new(self).0
    }

    /// A borrowed view of the value.
    #[inline]
    pub fn view(&self) -> AnyView<'_> {
        AnyView(&self.0)
    }

    /// The type index of the value.
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }

    /// A POD value of `type_index` with the given 64 bits.
    #[inline]
    fn pod(type_index: i32, value: TVMFFIAnyValue) -> Self {
        Any(TVMFFIAny {
            type_index,
            small_str_len: 0,
            value,
        })
    }

    /// A device value.
    pub fn device(device: DLDevice) -> Self {
        Any::pod(kTVMFFIDevice, TVMFFIAnyValue { v_device: device })
    }

    /// A data type value, its 8-byte union zero past the 4 bytes of the
    /// dtype: C++ compares and hashes the whole `v_uint64` (the reference
    /// clears it too), and `DLDataType` is the one union member narrower
    /// than 8 bytes.
    pub fn dtype(dtype: DLDataType) -> Self {
        let mut value = TVMFFIAnyValue { v_uint64: 0 };
        value.v_dtype = dtype;
        Any::pod(kTVMFFIDataType, value)
    }

    /// An opaque pointer value (`kTVMFFIOpaquePtr`, or None when NULL).
    pub fn opaque_ptr(ptr: *mut c_void) -> Self {
        if ptr.is_null() {
            Any::NONE
        } else {
            Any::pod(kTVMFFIOpaquePtr, TVMFFIAnyValue { v_ptr: ptr })
        }
    }
}

impl Drop for Any {
    #[inline]
    fn drop(&mut self) {
        if is_object_index(self.0.type_index) {
            // SAFETY: an owned object value holds one strong reference.
            if let Some(obj) = NonNull::new(unsafe { self.0.value.v_obj }) {
                // SAFETY: we give up that reference exactly once.
                unsafe { dec_ref(obj) };
            }
        }
    }
}

impl Clone for Any {
    fn clone(&self) -> Self {
        if is_object_index(self.0.type_index) {
            // SAFETY: an owned object value keeps its object alive.
            if let Some(obj) = NonNull::new(unsafe { self.0.value.v_obj }) {
                // SAFETY: as above.
                unsafe { inc_ref(obj) };
            }
        }
        Any(self.0)
    }
}

impl core::fmt::Debug for Any {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<i64> for Any {
    fn from(v: i64) -> Self {
        Any::pod(kTVMFFIInt, TVMFFIAnyValue { v_int64: v })
    }
}

impl From<bool> for Any {
    fn from(v: bool) -> Self {
        Any::pod(kTVMFFIBool, TVMFFIAnyValue { v_int64: v as i64 })
    }
}

impl From<f64> for Any {
    fn from(v: f64) -> Self {
        Any::pod(kTVMFFIFloat, TVMFFIAnyValue { v_float64: v })
    }
}

impl From<ObjectRef> for Any {
    fn from(obj: ObjectRef) -> Self {
        let type_index = obj.type_index();
        Any::pod(
            type_index,
            TVMFFIAnyValue {
                v_obj: obj.into_raw().as_ptr(),
            },
        )
    }
}

/// A borrowed value, valid while the `TVMFFIAny` it points to is.
#[derive(Clone, Copy)]
pub struct AnyView<'a>(&'a TVMFFIAny);

impl AnyView<'static> {
    /// A view of None.
    pub fn none() -> Self {
        static NONE: Any = Any::NONE;
        AnyView(&NONE.0)
    }
}

impl<'a> AnyView<'a> {
    /// Views a raw value.
    ///
    /// # Safety
    /// `raw` is a valid value of its kind for `'a`: objects are alive, raw
    /// strings are NUL-terminated, byte-array pointers point to live arrays,
    /// r-value references point to a writable object slot (or NULL) whose
    /// reference the callee may take, as the C ABI lets a callee do.
    #[inline]
    pub unsafe fn from_raw(raw: &'a TVMFFIAny) -> Self {
        AnyView(raw)
    }

    /// The type index of the value.
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }

    /// Whether both are the same value shallowly: the same type and the same
    /// bits (for objects, the same object), as C++ `Any::same_as`.
    pub fn same_as(&self, other: AnyView<'_>) -> bool {
        let (a, b) = (self.raw(), other.raw());
        // SAFETY: every bit pattern of the union is a valid `i64`.
        a.type_index == b.type_index
            && a.small_str_len == b.small_str_len
            && unsafe { a.value.v_int64 == b.value.v_int64 }
    }

    /// The raw value.
    #[inline]
    pub fn raw(&self) -> &'a TVMFFIAny {
        self.0
    }

    /// The value as an integer (`int` or `bool`).
    pub fn as_i64(&self) -> Option<i64> {
        match self.0.type_index {
            // SAFETY: ints and bools store `v_int64`.
            kTVMFFIInt | kTVMFFIBool => Some(unsafe { self.0.value.v_int64 }),
            _ => None,
        }
    }

    /// The value as a float (`float`, `int` or `bool`, as C++ casts).
    pub fn as_f64(&self) -> Option<f64> {
        match self.0.type_index {
            // SAFETY: floats store `v_float64`.
            kTVMFFIFloat => Some(unsafe { self.0.value.v_float64 }),
            _ => self.as_i64().map(|i| i as f64),
        }
    }

    /// The value as a data type.
    pub fn as_dtype(&self) -> Option<DLDataType> {
        match self.0.type_index {
            // SAFETY: data types store `v_dtype`.
            kTVMFFIDataType => Some(unsafe { self.0.value.v_dtype }),
            _ => None,
        }
    }

    /// The value as a device.
    pub fn as_device(&self) -> Option<DLDevice> {
        match self.0.type_index {
            // SAFETY: devices store `v_device`.
            kTVMFFIDevice => Some(unsafe { self.0.value.v_device }),
            _ => None,
        }
    }

    /// The value as a pointer (`void*`, or None as NULL).
    pub fn as_opaque_ptr(&self) -> Option<*mut c_void> {
        match self.0.type_index {
            kTVMFFINone => Some(core::ptr::null_mut()),
            // SAFETY: opaque pointers store `v_ptr`.
            kTVMFFIOpaquePtr => Some(unsafe { self.0.value.v_ptr }),
            _ => None,
        }
    }

    /// The object handle when the value is an object.
    pub fn as_object_ptr(&self) -> Option<NonNull<TVMFFIObject>> {
        if is_object_index(self.0.type_index) {
            // SAFETY: object values store `v_obj`.
            NonNull::new(unsafe { self.0.value.v_obj })
        } else {
            None
        }
    }

    /// The object as a borrowed reference that never touches the count;
    /// the caller must not keep it beyond the view's lifetime.
    pub fn borrow_object(&self) -> Option<core::mem::ManuallyDrop<ObjectRef>> {
        // SAFETY: the view keeps the object alive for `'a`, and ManuallyDrop
        // never releases the reference we did not take.
        self.as_object_ptr()
            .map(|p| core::mem::ManuallyDrop::new(unsafe { ObjectRef::from_raw(p) }))
    }

    /// The value as a lookup key: borrowed, except that raw strings and
    /// byte-array pointers become (owned) String/Bytes values, as C++'s
    /// `const Any&` parameters convert them.
    pub fn as_key(&self) -> Result<Key<'a>> {
        Ok(match self.0.type_index {
            kTVMFFIRawStr | kTVMFFIByteArrayPtr => Key::Owned(self.to_owned_any()?),
            _ => Key::Borrowed(self.0),
        })
    }

    /// A new strong reference to the object, if the value is one.
    pub fn to_object(&self) -> Option<ObjectRef> {
        // SAFETY: per `from_raw` the object is alive while the view is.
        self.as_object_ptr()
            .map(|p| unsafe { ObjectRef::from_borrowed(p) })
    }
}

/// A value used as a lookup key (see [`AnyView::as_key`]).
pub enum Key<'a> {
    /// The caller's value as it is.
    Borrowed(&'a TVMFFIAny),
    /// A converted value.
    Owned(Any),
}

impl Key<'_> {
    /// The key as a view.
    pub fn view(&self) -> AnyView<'_> {
        match self {
            Key::Borrowed(raw) => AnyView(raw),
            Key::Owned(any) => any.view(),
        }
    }

    /// The raw value.
    pub fn raw(&self) -> &TVMFFIAny {
        match self {
            Key::Borrowed(raw) => raw,
            Key::Owned(any) => &any.0,
        }
    }
}

/// Takes the object out of an r-value reference (`v_ptr` is the address of a
/// `TVMFFIObject*`), leaving NULL behind.
///
/// # Safety
/// `raw.v_ptr` is NULL or points to a writable `TVMFFIObject*` slot that
/// owns one strong reference (or is NULL).
pub unsafe fn take_rvalue_ref(raw: &TVMFFIAny) -> Result<Any> {
    // SAFETY: r-value references store `v_ptr`.
    let slot = unsafe { raw.value.v_ptr }.cast::<*mut TVMFFIObject>();
    if slot.is_null() {
        return Err(Error::value("the r-value reference points nowhere (NULL)"));
    }
    // SAFETY: per the contract `slot` is a writable object slot.
    let obj = unsafe { core::ptr::replace(slot, core::ptr::null_mut()) };
    match NonNull::new(obj) {
        // SAFETY: the slot owned this reference; we moved it out.
        Some(obj) => Ok(Any::from(unsafe { ObjectRef::from_raw(obj) })),
        None => Err(Error::value("the r-value reference was already moved from")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_values_write_all_sixteen_bytes() {
        let dtype = DLDataType {
            code: 2,
            bits: 32,
            lanes: 4,
        };
        let device = DLDevice {
            device_type: 2,
            device_id: 1,
        };
        for (v, bits) in [
            (Any::dtype(dtype), 0x0004_2002u64),
            (Any::device(device), 0x1_0000_0002),
            (Any::from(true), 1),
            (Any::from(-1i64), u64::MAX),
        ] {
            let raw = v.into_raw();
            assert_eq!(raw.small_str_len, 0);
            // SAFETY: every bit pattern of the union is a valid u64.
            assert_eq!(unsafe { raw.value.v_uint64 }, bits);
        }
    }
}
