//! Objects: [`ObjectRef`] to a Rust struct the runtime sees as a reflected
//! object type (made by `#[derive(Object)]`), and the plumbing every
//! reference-counted handle in this crate shares.

use crate::any::{Any, AnyView};
use crate::convert::{FromAny, IntoAny, TypeSchema};
use crate::error::{Error, Result};
use crate::handle::Obj;
use crate::sys::{self, ByteArray, Handle};
use core::ffi::{c_int, c_void};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use std::sync::{Mutex, OnceLock};

/// A Rust struct that is a TVM-FFI object type. Implemented by
/// `#[derive(Object)]`, which registers the type key and every field.
pub trait ObjectType: Default + Send + Sync + Sized + 'static {
    /// The type key (`my_ext.Point`).
    const TYPE_KEY: &'static str;
    /// The fields the runtime sees (name, offset, conversions, flags).
    fn fields() -> Vec<FieldSpec>;
    /// The registered type index (registering the type on first use).
    fn type_index() -> Result<i32>;
}

/// The memory of an object made from a Rust struct: header, then the value.
#[repr(C)]
struct Cell<T> {
    header: sys::ObjectHeader,
    value: ManuallyDrop<T>,
}

/// The byte offset of the struct inside its object, for field offsets.
#[doc(hidden)]
pub const fn value_offset<T>() -> usize {
    core::mem::offset_of!(Cell<T>, value)
}

/// A counted reference to an object whose payload is the Rust struct `T`.
/// Dereferences to `&T`; Python, C and C++ see its fields by reflection.
pub struct ObjectRef<T: ObjectType> {
    obj: Obj,
    _t: PhantomData<T>,
}

impl<T: ObjectType> ObjectRef<T> {
    /// Moves `value` into a new object of type `T::TYPE_KEY`.
    pub fn new(value: T) -> Result<ObjectRef<T>> {
        let type_index = T::type_index()?;
        let cell = Box::new(Cell {
            header: sys::ObjectHeader {
                // One strong and one weak reference (the strong ones' share).
                combined_ref_count: (1u64 | (1u64 << 32)).into(),
                type_index,
                padding: 0,
                deleter: Some(delete::<T>),
            },
            value: ManuallyDrop::new(value),
        });
        // SAFETY: a fresh object with one reference, now owned by `obj`.
        let obj = unsafe { Obj::from_owned(Box::into_raw(cell).cast()) };
        Ok(ObjectRef {
            obj,
            _t: PhantomData,
        })
    }
    /// The object as a value.
    pub fn to_any(&self) -> Any {
        Any::from_obj(&self.obj)
    }
    /// Whether both refer to the same object.
    pub fn same_as(&self, other: &ObjectRef<T>) -> bool {
        self.obj.handle() == other.obj.handle()
    }
}

impl<T: ObjectType> Clone for ObjectRef<T> {
    fn clone(&self) -> Self {
        ObjectRef {
            obj: self.obj.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: ObjectType> core::ops::Deref for ObjectRef<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: objects of `T`'s type index are always `Cell<T>` (made by
        // `new` or the creator below), alive while we hold a reference, and
        // never mutated except through `Writable` fields.
        unsafe { &(*self.obj.handle().cast::<Cell<T>>()).value }
    }
}

impl<T: ObjectType + core::fmt::Debug> core::fmt::Debug for ObjectRef<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        (**self).fmt(f)
    }
}

/// Frees an object made by `ObjectRef::new` or the creator.
unsafe extern "C" fn delete<T>(obj: *mut c_void, flags: c_int) {
    let cell = obj.cast::<Cell<T>>();
    if flags & sys::DELETE_STRONG != 0 {
        // SAFETY: the last strong reference is gone: nobody reads the value
        // again, and it is dropped once.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            ManuallyDrop::drop(&mut (*cell).value)
        }));
        drop(result);
    }
    if flags & sys::DELETE_WEAK != 0 {
        // SAFETY: the memory came from `Box<Cell<T>>`, and no reference of
        // any kind remains.
        drop(unsafe { Box::from_raw(cell) });
    }
}

/// `TVMFFIObjectCreator` for `T`: a default-initialised object, which the
/// runtime then fills through the field setters (keyword construction,
/// JSON graphs).
unsafe extern "C" fn create<T: ObjectType>(out: *mut Handle) -> c_int {
    crate::export::guard(T::TYPE_KEY, || {
        let r = ObjectRef::new(T::default())?;
        // SAFETY: the runtime passes a writable slot; the reference moves
        // into it.
        unsafe { *out = r.obj.handle() };
        core::mem::forget(r);
        Ok(())
    })
}

/// A field's value type: how the runtime reads and writes it.
pub trait FieldValue: Sized {
    /// Whether other languages may assign it after construction.
    const WRITABLE: bool = false;
    /// The static type index stored in the field's reflection record.
    const STATIC_TYPE_INDEX: i32 = sys::ANY;
    /// Reads it.
    fn get(&self) -> Result<Any>;
    /// Converts a value for [`FieldValue::store`] (`None` when it does not
    /// convert).
    fn convert(v: AnyView<'_>) -> Option<Self>;
    /// The schema (shown in errors).
    fn schema() -> TypeSchema;
    /// Stores `value` in the field at `place`.
    ///
    /// # Safety
    /// `place` is a live field of this type. A plain field may be written
    /// only while nothing else reads its object: while the object is being
    /// built (the runtime's creator, then keyword construction or a JSON
    /// graph), or by in-place mutation of an object nobody else references
    /// (a Rust reference to the struct holds a reference to the object).
    /// [`Writable`] fields are written under their lock, at any time.
    unsafe fn store(place: *mut Self, value: Self) {
        // SAFETY: the caller's promise: nobody else reads the field.
        unsafe { *place = value };
    }
}

impl<T: for<'a> FromAny<'a> + IntoAny + Clone> FieldValue for T {
    fn get(&self) -> Result<Any> {
        self.clone().into_any()
    }
    fn convert(v: AnyView<'_>) -> Option<Self> {
        T::from_view(v)
    }
    fn schema() -> TypeSchema {
        <T as FromAny>::schema()
    }
}

/// A field other languages may assign after construction
/// (`obj.count = 3` in Python). Rust reads it with [`Writable::get`].
#[derive(Default)]
pub struct Writable<T>(Mutex<T>);

impl<T: Clone> Writable<T> {
    /// A writable field holding `value`.
    pub fn new(value: T) -> Writable<T> {
        Writable(Mutex::new(value))
    }
    /// The current value.
    pub fn get(&self) -> T {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    /// Replaces the value.
    pub fn set(&self, value: T) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = value;
    }
}

impl<T: Clone + core::fmt::Debug> core::fmt::Debug for Writable<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.get().fmt(f)
    }
}

/// How the runtime reaches one field: made by `#[derive(Object)]`.
#[doc(hidden)]
pub struct FieldSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub offset: usize,
    pub size: usize,
    pub align: usize,
    pub writable: bool,
    pub static_type_index: i32,
    pub getter: sys::FieldGetter,
    pub setter: sys::FieldSetter,
    pub default: Option<fn() -> Result<Any>>,
}

impl FieldSpec {
    /// The record for field `name` of type `F` at `offset` in the object.
    pub fn of<F: FieldValue>(name: &'static str, doc: &'static str, offset: usize) -> FieldSpec {
        FieldSpec {
            name,
            doc,
            offset,
            size: size_of::<F>(),
            align: align_of::<F>(),
            writable: F::WRITABLE,
            static_type_index: F::STATIC_TYPE_INDEX,
            getter: field_get::<F>,
            setter: field_set::<F>,
            default: None,
        }
    }
    /// The same field with a default (used when construction omits it).
    pub fn with_default(mut self, default: fn() -> Result<Any>) -> FieldSpec {
        self.default = Some(default);
        self
    }
}

impl<T: for<'a> FromAny<'a> + IntoAny + Clone> FieldValue for Writable<T> {
    const WRITABLE: bool = true;
    fn get(&self) -> Result<Any> {
        Writable::get(self).into_any()
    }
    fn convert(v: AnyView<'_>) -> Option<Self> {
        T::from_view(v).map(Writable::new)
    }
    fn schema() -> TypeSchema {
        <T as FromAny>::schema()
    }
    unsafe fn store(place: *mut Self, value: Self) {
        // SAFETY: a live field (the caller's promise), only borrowed
        // shared: the lock orders the write against readers.
        unsafe { (*place).set(value.get()) };
    }
}

/// `TVMFFIFieldGetter` of a field of type `F`.
unsafe extern "C" fn field_get<F: FieldValue>(field: *mut c_void, out: *mut sys::RawAny) -> c_int {
    crate::export::guard("field getter", || {
        // SAFETY: the runtime passes the address of a live `F` field (the
        // offset registered for it) and a writable result.
        let value = unsafe { &*field.cast::<F>() }.get()?;
        // SAFETY: as above.
        unsafe { *out = value.into_raw() };
        Ok(())
    })
}

/// `TVMFFIFieldSetter` of a field of type `F`.
unsafe extern "C" fn field_set<F: FieldValue>(
    field: *mut c_void,
    value: *const sys::RawAny,
) -> c_int {
    crate::export::guard("field setter", || {
        // SAFETY: the runtime passes a valid value for the call.
        let view = AnyView::new(unsafe { &*value });
        let Some(v) = F::convert(view) else {
            return Err(Error::type_error(format!(
                "Expected `{}` but got `{}`",
                F::schema().text(),
                view.type_key()
            )));
        };
        // SAFETY: the runtime calls a setter with the address of a live
        // `F` field, for plain fields only on objects nobody else reads
        // (see `FieldValue::store`).
        unsafe { F::store(field.cast::<F>(), v) };
        Ok(())
    })
}

/// Registers `T` with the runtime: key, parent (`ffi.Object`), fields,
/// creator and structural-equality kind, then the generated
/// `__ffi_init__` (keyword construction). Called once per type.
#[doc(hidden)]
pub fn register<T: ObjectType>() -> Result<i32> {
    crate::runtime::check_single_runtime()?;
    let key = ByteArray::of(T::TYPE_KEY.as_bytes());
    let mut existing = -1;
    // SAFETY: valid key; writable out.
    if unsafe { sys::TVMFFITypeKeyToIndex(&key, &mut existing) } == 0 {
        return Err(Error::runtime_error(format!(
            "type key `{}` is already registered (index {existing}): a second copy of this \
             library, or another type with the same key",
            T::TYPE_KEY
        )));
    }
    // The lookup's failure raised a "not found" error: clear it.
    drop(Error::take_raised());
    // SAFETY: valid key; -1 asks for a dynamic index under ffi.Object.
    let index = unsafe { sys::TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, sys::OBJECT) };
    if index < 0 {
        return Err(Error::take_raised());
    }
    let mut defaults = Vec::new();
    for f in T::fields() {
        let default = match f.default {
            Some(make) => Some(make()?),
            None => None,
        };
        let info = sys::FieldInfo {
            name: ByteArray::of(f.name.as_bytes()),
            doc: ByteArray::of(f.doc.as_bytes()),
            metadata: ByteArray::of(b"{}"),
            flags: if f.writable { sys::FIELD_WRITABLE } else { 0 }
                | if default.is_some() {
                    sys::FIELD_HAS_DEFAULT
                } else {
                    0
                },
            size: f.size as i64,
            alignment: f.align as i64,
            offset: f.offset as i64,
            getter: Some(f.getter),
            setter: f.setter as *mut c_void,
            default_value: default.as_ref().map_or(sys::RawAny::NONE, |d| *d.raw()),
            field_static_type_index: f.static_type_index,
        };
        // SAFETY: a complete record; the runtime copies what it keeps
        // (taking its own reference to the default).
        crate::error::check(unsafe { sys::TVMFFITypeRegisterField(index, &info) })?;
        defaults.push(default);
    }
    let meta = sys::TypeMetadata {
        doc: ByteArray::of(b""),
        creator: Some(create::<T>),
        total_size: i32::try_from(size_of::<Cell<T>>()).unwrap_or(i32::MAX),
        structural_eq_hash_kind: sys::SEQ_HASH_TREE_NODE,
    };
    // SAFETY: a complete record.
    crate::error::check(unsafe { sys::TVMFFITypeRegisterMetadata(index, &meta) })?;
    crate::function::call_global("ffi._RegisterFFIInit", &[IntoAny::into_any(index)?.view()])?;
    Ok(index)
}

/// The per-type registration result, kept by the derive in a static.
#[doc(hidden)]
pub type Registration = OnceLock<core::result::Result<i32, String>>;

/// Registers `T` once and returns its index (or the first attempt's error).
#[doc(hidden)]
pub fn registered<T: ObjectType>(slot: &Registration) -> Result<i32> {
    slot.get_or_init(|| register::<T>().map_err(|e| e.to_string()))
        .clone()
        .map_err(Error::runtime_error)
}

impl<T: ObjectType> IntoAny for ObjectRef<T> {
    fn into_any(self) -> Result<Any> {
        Ok(Any::from_owned_obj(self.obj))
    }
}

impl<'a, T: ObjectType> FromAny<'a> for ObjectRef<T> {
    fn schema() -> TypeSchema {
        TypeSchema::leaf(T::TYPE_KEY)
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        let index = T::type_index().ok()?;
        // Only objects of exactly this type have `T`'s layout: a subtype
        // registered elsewhere would not.
        if v.type_index() != index {
            return None;
        }
        Some(ObjectRef {
            obj: v.new_ref()?,
            _t: PhantomData,
        })
    }
}
