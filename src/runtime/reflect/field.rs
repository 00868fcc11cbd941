//! Reflected field storage: the C getter and setter functions of every field
//! kind the library lays out (the reflected built-in types and the
//! Python-defined dataclass types), and the C++ conventions they follow.
//!
//! A getter is `int(void* field, TVMFFIAny* out)` and writes an owned value;
//! a setter is `int(void* field, const TVMFFIAny* value)` and converts the
//! value to the field's type, raising `TypeError` ("Cannot convert from type
//! `X` to `T`") when it does not convert.

use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::boundary::catch_to_code;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::model::type_table::type_key_of;
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;

/// How a field is stored in the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// `int64_t`.
    I64,
    /// `int32_t` (read and written as an int).
    I32,
    /// `double`.
    F64,
    /// C++ `bool` (one byte).
    Bool,
    /// `void*`.
    Ptr,
    /// `DLDataType`.
    DataType,
    /// `DLDevice`.
    Device,
    /// `Any` (16 bytes).
    Any,
    /// `String` (an `Any` holding a small or heap string).
    Str,
    /// `ObjectRef` or `Optional<ObjectRef>` (a nullable object pointer).
    Object,
}

impl Storage {
    /// The size and alignment of the storage.
    pub fn size_align(self) -> (i64, i64) {
        match self {
            Storage::I64 | Storage::F64 | Storage::Ptr | Storage::Device | Storage::Object => {
                (8, 8)
            }
            Storage::I32 | Storage::DataType => (4, 4),
            Storage::Bool => (1, 1),
            Storage::Any | Storage::Str => (16, 8),
        }
    }

    /// The storage a Python-defined field of `static_type_index` (and
    /// `size`) has, as the reference lays those objects out.
    pub fn of_static_type(static_type_index: i32, size: i64) -> Result<Storage> {
        Ok(match static_type_index {
            kTVMFFIInt => Storage::I64,
            kTVMFFIFloat => Storage::F64,
            kTVMFFIBool => Storage::Bool,
            kTVMFFIOpaquePtr => Storage::Ptr,
            kTVMFFIDataType => Storage::DataType,
            kTVMFFIDevice => Storage::Device,
            // C++ parents may store a compact ObjectRef under an `Any` type.
            kTVMFFIAny if size == 8 => Storage::Object,
            kTVMFFIAny | kTVMFFINone => Storage::Any,
            t if t >= kTVMFFIStaticObjectBegin => Storage::Object,
            t => {
                return Err(Error::value(format!(
                    "Unsupported field type index for getter: {t}"
                )));
            }
        })
    }

    /// The C getter of the storage.
    pub fn getter(self) -> TVMFFIFieldGetter {
        Some(match self {
            Storage::I64 => get_i64,
            Storage::I32 => get_i32,
            Storage::F64 => get_f64,
            Storage::Bool => get_bool,
            Storage::Ptr => get_ptr,
            Storage::DataType => get_dtype,
            Storage::Device => get_device,
            Storage::Any | Storage::Str => get_any,
            Storage::Object => get_object,
        })
    }

    /// Reads the field as an owned value.
    ///
    /// # Safety
    /// `field` points to a live, initialised field of this storage.
    pub unsafe fn read(self, field: *const c_void) -> Any {
        // SAFETY: per the contract, for each storage kind.
        unsafe {
            match self {
                Storage::I64 => Any::from(field.cast::<i64>().read_unaligned()),
                Storage::I32 => Any::from(i64::from(field.cast::<i32>().read_unaligned())),
                Storage::F64 => Any::from(field.cast::<f64>().read_unaligned()),
                Storage::Bool => Any::from(field.cast::<u8>().read() != 0),
                Storage::Ptr => Any::opaque_ptr(field.cast::<*mut c_void>().read_unaligned()),
                Storage::DataType => Any::dtype(field.cast::<DLDataType>().read_unaligned()),
                Storage::Device => Any::device(field.cast::<DLDevice>().read_unaligned()),
                Storage::Any | Storage::Str => (*field.cast::<Any>()).clone(),
                Storage::Object => match NonNull::new(field.cast::<*mut TVMFFIObject>().read()) {
                    Some(obj) => Any::from(ObjectRef::from_borrowed(obj)),
                    None => Any::NONE,
                },
            }
        }
    }

    /// Converts `v` to the field's type and writes it, releasing the old
    /// value of owning kinds. A value that does not convert is a TypeError
    /// naming its own type.
    ///
    /// # Safety
    /// `field` points to a live, initialised (or zeroed) field of this
    /// storage, writable and not read concurrently.
    pub unsafe fn write(self, field: *mut c_void, v: AnyView<'_>) -> Result<()> {
        let fail = || convert_error(v, self.type_text());
        // SAFETY: per the contract, for each storage kind.
        unsafe {
            match self {
                Storage::I64 => field
                    .cast::<i64>()
                    .write_unaligned(v.as_i64().ok_or_else(fail)?),
                Storage::I32 => field.cast::<i32>().write_unaligned(
                    v.as_i64()
                        .and_then(|i| i32::try_from(i).ok())
                        .ok_or_else(fail)?,
                ),
                Storage::F64 => field
                    .cast::<f64>()
                    .write_unaligned(v.as_f64().ok_or_else(fail)?),
                Storage::Bool => field
                    .cast::<u8>()
                    .write(u8::from(v.as_i64().ok_or_else(fail)? != 0)),
                Storage::Ptr => field
                    .cast::<*mut c_void>()
                    .write_unaligned(v.as_opaque_ptr().ok_or_else(fail)?),
                Storage::DataType => field
                    .cast::<DLDataType>()
                    .write_unaligned(v.as_dtype().ok_or_else(fail)?),
                Storage::Device => field
                    .cast::<DLDevice>()
                    .write_unaligned(v.as_device().ok_or_else(fail)?),
                Storage::Any => *field.cast::<Any>() = v.to_owned_any()?,
                Storage::Str => {
                    let text = v.as_str_bytes().ok_or_else(fail)?;
                    let s = make_text(text, TextKind::Str);
                    *field.cast::<Any>() = s;
                }
                Storage::Object => {
                    if v.type_index() != kTVMFFINone && !is_object_index(v.type_index()) {
                        return Err(fail());
                    }
                    let new = v
                        .to_object()
                        .map_or(core::ptr::null_mut(), ObjectRef::into_raw_ptr);
                    let slot = field.cast::<*mut TVMFFIObject>();
                    let old = slot.replace(new);
                    if let Some(old) = NonNull::new(old) {
                        drop(ObjectRef::from_raw(old));
                    }
                }
            }
        }
        Ok(())
    }

    /// Initialises a zeroed field (owning kinds start as None / empty).
    ///
    /// # Safety
    /// `field` points to zeroed, writable storage of this kind.
    pub unsafe fn init(self, field: *mut c_void) {
        if matches!(self, Storage::Any | Storage::Str) {
            // SAFETY: per the contract.
            unsafe { field.cast::<TVMFFIAny>().write(TVMFFIAny::NONE) };
        }
    }

    /// Releases what the field owns (the object is being destroyed).
    ///
    /// # Safety
    /// `field` points to a live field of this storage, not used afterwards.
    pub unsafe fn release(self, field: *mut c_void) {
        // SAFETY: per the contract.
        unsafe {
            match self {
                Storage::Any | Storage::Str => drop(field.cast::<Any>().read()),
                Storage::Object => {
                    if let Some(obj) = NonNull::new(field.cast::<*mut TVMFFIObject>().read()) {
                        drop(ObjectRef::from_raw(obj));
                    }
                }
                _ => {}
            }
        }
    }

    /// The type name setter errors quote.
    fn type_text(self) -> &'static str {
        match self {
            Storage::I64 | Storage::I32 => "int",
            Storage::F64 => "float",
            Storage::Bool => "bool",
            Storage::Ptr => "void*",
            Storage::DataType => "DataType",
            Storage::Device => "Device",
            Storage::Any => "Any",
            Storage::Str => "str",
            Storage::Object => "ffi.Object",
        }
    }
}

/// `Cannot convert from type `X` to `T``, as C++ casts say it.
pub fn convert_error(v: AnyView<'_>, to: &str) -> Error {
    Error::type_error(format!(
        "Cannot convert from type `{}` to `{to}`",
        type_key_of(v.type_index())
    ))
}

macro_rules! getter {
    ($name:ident, $storage:expr) => {
        /// A field getter of the C ABI (see the module documentation).
        ///
        /// # Safety
        /// `field` is a live field of this storage; `out` is writable.
        pub unsafe extern "C" fn $name(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
            catch_to_code(|| {
                // SAFETY: per the contract.
                unsafe { out.write($storage.read(field).into_raw()) };
                Ok(())
            })
        }
    };
}
getter!(get_i64, Storage::I64);
getter!(get_i32, Storage::I32);
getter!(get_f64, Storage::F64);
getter!(get_bool, Storage::Bool);
getter!(get_ptr, Storage::Ptr);
getter!(get_dtype, Storage::DataType);
getter!(get_device, Storage::Device);
getter!(get_any, Storage::Any);
getter!(get_object, Storage::Object);

macro_rules! setter {
    ($name:ident, $storage:expr) => {
        /// A field setter of the C ABI (see the module documentation).
        ///
        /// # Safety
        /// `field` is a live field of this storage; `value` is a valid value.
        pub unsafe extern "C" fn $name(field: *mut c_void, value: *const TVMFFIAny) -> c_int {
            catch_to_code(|| {
                // SAFETY: per the contract.
                unsafe { $storage.write(field, AnyView::from_raw(&*value)) }
            })
        }
    };
}
setter!(set_i64, Storage::I64);
setter!(set_i32, Storage::I32);
setter!(set_any, Storage::Any);
setter!(set_str, Storage::Str);
setter!(set_object, Storage::Object);

/// The C setter of `storage` for the built-in reflected types.
pub fn setter_of(storage: Storage) -> *mut c_void {
    let f: unsafe extern "C" fn(*mut c_void, *const TVMFFIAny) -> c_int = match storage {
        Storage::I64 => set_i64,
        Storage::I32 => set_i32,
        Storage::Str => set_str,
        Storage::Object => set_object,
        _ => set_any,
    };
    f as *mut c_void
}

/// Calls a field's setter (a C setter or, with
/// `kTVMFFIFieldFlagBitSetterIsFunctionObj`, a Function taking the field's
/// address and the value).
///
/// # Safety
/// `info` describes a field of the object `field` points into.
pub unsafe fn call_setter(
    info: &TVMFFIFieldInfo,
    field: *mut c_void,
    value: &TVMFFIAny,
) -> Result<()> {
    if info.setter.is_null() {
        return Err(Error::type_error(format!(
            "field `{}` has no setter",
            // SAFETY: field names live in the type table's pool.
            String::from_utf8_lossy(unsafe { crate::runtime::model::bytes::byte_slice(info.name) })
        )));
    }
    if info.flags & i64::from(kTVMFFIFieldFlagBitSetterIsFunctionObj) != 0 {
        // SAFETY: the flag says `setter` is a Function handle the type table
        // keeps alive.
        let f = unsafe { ObjectRef::from_borrowed(NonNull::new_unchecked(info.setter.cast())) };
        let f = Function::from_object(f)
            .ok_or_else(|| Error::type_error("setter is not a Function"))?;
        let addr = Any::opaque_ptr(field);
        // SAFETY: `value` is valid per this function's contract.
        f.call(&[addr.view(), unsafe { AnyView::from_raw(value) }])?;
        return Ok(());
    }
    // SAFETY: without the flag `setter` is a C setter function.
    let setter: unsafe extern "C" fn(*mut c_void, *const TVMFFIAny) -> c_int =
        unsafe { core::mem::transmute(info.setter) };
    // SAFETY: per the contract.
    let code = unsafe { setter(field, value) };
    if code != 0 {
        return Err(Error::from_raised(code));
    }
    Ok(())
}

/// Sets a field to its default (the value, or the factory's result).
///
/// # Safety
/// As [`call_setter`]; the field has `kTVMFFIFieldFlagBitMaskHasDefault`.
pub unsafe fn set_default(info: &TVMFFIFieldInfo, field: *mut c_void) -> Result<()> {
    if info.flags & i64::from(kTVMFFIFieldFlagBitMaskDefaultFromFactory) != 0 {
        // SAFETY: the type table keeps the default alive.
        let factory = unsafe { AnyView::from_raw(&info.default_value_or_factory) };
        let factory = factory
            .to_object()
            .and_then(Function::from_object)
            .ok_or_else(|| Error::type_error("default factory is not a Function"))?;
        let value = factory.call(&[])?;
        // SAFETY: per the contract.
        return unsafe { call_setter(info, field, value.view().raw()) };
    }
    // SAFETY: per the contract.
    unsafe { call_setter(info, field, &info.default_value_or_factory) }
}

/// Fills a field no value was given for: its default, else the
/// reference's `TypeError` for a required field of `type_index`.
///
/// # Safety
/// As [`call_setter`].
pub unsafe fn set_missing(
    info: &TVMFFIFieldInfo,
    field: *mut c_void,
    type_index: i32,
) -> Result<()> {
    if info.flags & i64::from(kTVMFFIFieldFlagBitMaskHasDefault) != 0 {
        // SAFETY: per the contract; the field has a default.
        return unsafe { set_default(info, field) };
    }
    Err(Error::type_error(format!(
        "Required field `{}` not set in type `{}`",
        String::from_utf8_lossy(field_name(info)),
        type_key_of(type_index)
    )))
}

/// The name of a registered field.
pub fn field_name(info: &TVMFFIFieldInfo) -> &[u8] {
    // SAFETY: field names live in the type table's pool forever.
    unsafe { crate::runtime::model::bytes::byte_slice(info.name) }
}

/// The address of a field of `obj` (`info` is a field of its type).
pub fn field_addr(obj: &ObjectRef, info: &TVMFFIFieldInfo) -> *mut c_void {
    obj.as_ptr()
        .cast::<u8>()
        .wrapping_add(info.offset as usize)
        .cast()
}

/// Reads a reflected field through its getter.
pub fn get_field(obj: &ObjectRef, info: &TVMFFIFieldInfo) -> Result<Any> {
    let getter = info
        .getter
        .ok_or_else(|| Error::type_error("a reflected field has no getter"))?;
    let mut out = TVMFFIAny::NONE;
    // SAFETY: `info` is a field of `obj`'s type; the getter writes an owned value.
    let code = unsafe { getter(field_addr(obj, info), &mut out) };
    if code != 0 {
        return Err(Error::from_raised(code));
    }
    // SAFETY: as above.
    Ok(unsafe { Any::from_raw(out) })
}

/// Writes a reflected field through its setter.
pub fn set_field(obj: &ObjectRef, info: &TVMFFIFieldInfo, value: &Any) -> Result<()> {
    // SAFETY: `info` is a field of `obj`'s type.
    unsafe { call_setter(info, field_addr(obj, info), value.view().raw()) }
}
