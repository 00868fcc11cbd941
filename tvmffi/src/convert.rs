//! Conversions between Rust values and TVM-FFI values: [`IntoAny`] (Rust
//! to FFI) and [`FromAny`] (FFI to Rust, what a typed parameter accepts),
//! each with the [`TypeSchema`] that signatures and errors quote.

use crate::any::{Any, AnyView};
use crate::error::{Error, Result};
use crate::handle::Obj;
use crate::sys::{self, ByteArray, RawAny};

/// A type as the reference's schemas describe it: a JSON type name with
/// type arguments (`{"type":"ffi.Array","args":[{"type":"int"}]}`) and the
/// text messages show (`Array<int>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeSchema {
    json: &'static str,
    text: &'static str,
    args: Vec<TypeSchema>,
}

impl TypeSchema {
    /// A type without arguments shown by its name (`ffi.Tensor`).
    pub const fn leaf(name: &'static str) -> TypeSchema {
        TypeSchema {
            json: name,
            text: name,
            args: Vec::new(),
        }
    }
    pub(crate) const fn named(json: &'static str, text: &'static str) -> TypeSchema {
        TypeSchema {
            json,
            text,
            args: Vec::new(),
        }
    }
    pub(crate) fn generic(
        json: &'static str,
        text: &'static str,
        args: Vec<TypeSchema>,
    ) -> TypeSchema {
        TypeSchema { json, text, args }
    }
    /// The JSON form.
    pub fn json(&self) -> String {
        let mut out = format!("{{\"type\":\"{}\"", self.json);
        if !self.args.is_empty() {
            let args: Vec<String> = self.args.iter().map(TypeSchema::json).collect();
            out.push_str(&format!(",\"args\":[{}]", args.join(",")));
        }
        out.push('}');
        out
    }
    /// The form in messages.
    pub fn text(&self) -> String {
        if self.args.is_empty() {
            return self.text.to_owned();
        }
        let args: Vec<String> = self.args.iter().map(TypeSchema::text).collect();
        format!("{}<{}>", self.text, args.join(", "))
    }
}

/// A Rust value that becomes a TVM-FFI value (an argument or a result).
pub trait IntoAny {
    /// Converts it (strings and containers are allocated by the runtime,
    /// which can fail).
    fn into_any(self) -> Result<Any>;
}

/// A Rust type a TVM-FFI value converts to: what a typed parameter accepts.
/// `'a` is how long a borrowed argument lives (`&'a str`).
pub trait FromAny<'a>: Sized {
    /// The parameter's schema.
    fn schema() -> TypeSchema;
    /// Converts the value, or `None` when it is of another type.
    fn from_view(v: AnyView<'a>) -> Option<Self>;
    /// What an argument error says a value that did not convert was: its
    /// type key, unless the type knows better.
    fn describe(v: AnyView<'_>) -> String {
        v.type_key()
    }
}

impl Any {
    /// Converts it to `T` (see [`FromAny`]).
    pub fn get<'a, T: FromAny<'a>>(&'a self) -> Option<T> {
        T::from_view(self.view())
    }
}

impl<'a> AnyView<'a> {
    /// Converts it to `T` (see [`FromAny`]).
    pub fn get<T: FromAny<'a>>(&self) -> Option<T> {
        T::from_view(*self)
    }
}

/// A function's result: a value, `()` (None) or a `Result` of either.
pub trait IntoResult {
    /// The result's schema.
    fn schema() -> TypeSchema;
    /// The value, or the error to raise.
    fn into_result(self) -> Result<Any>;
}

impl<T: IntoAny + for<'a> FromAny<'a>> IntoResult for T {
    fn schema() -> TypeSchema {
        <T as FromAny>::schema()
    }
    fn into_result(self) -> Result<Any> {
        self.into_any()
    }
}

impl<T: IntoAny + for<'a> FromAny<'a>, E: Into<Error>> IntoResult for core::result::Result<T, E> {
    fn schema() -> TypeSchema {
        <T as FromAny>::schema()
    }
    fn into_result(self) -> Result<Any> {
        self.map_err(Into::into)?.into_any()
    }
}

fn scalar(type_index: i32, bits: u64) -> Any {
    // SAFETY: a scalar holds no reference.
    unsafe {
        Any::from_raw(RawAny {
            type_index,
            small_len: 0,
            bits,
        })
    }
}

impl IntoAny for Any {
    fn into_any(self) -> Result<Any> {
        Ok(self)
    }
}

impl<'a> FromAny<'a> for Any {
    fn schema() -> TypeSchema {
        TypeSchema::leaf("Any")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        v.to_owned().ok()
    }
}

impl<'a> FromAny<'a> for AnyView<'a> {
    fn schema() -> TypeSchema {
        TypeSchema::named("Any", "AnyView")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        Some(v)
    }
}

impl IntoAny for () {
    fn into_any(self) -> Result<Any> {
        Ok(Any::none())
    }
}

impl<'a> FromAny<'a> for () {
    fn schema() -> TypeSchema {
        TypeSchema::named("None", "void")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        (v.type_index() == sys::NONE).then_some(())
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl IntoAny for $t {
            fn into_any(self) -> Result<Any> {
                let v = i64::try_from(self)
                    .map_err(|_| Error::value_error(format!("{self} does not fit in an int64")))?;
                Ok(scalar(sys::INT, v as u64))
            }
        }
        impl<'a> FromAny<'a> for $t {
            fn schema() -> TypeSchema {
                TypeSchema::leaf("int")
            }
            /// An int or a bool that fits (as the reference converts).
            fn from_view(v: AnyView<'a>) -> Option<Self> {
                match v.type_index() {
                    sys::INT | sys::BOOL => <$t>::try_from(v.raw().bits as i64).ok(),
                    _ => None,
                }
            }
        }
    )*};
}
integers!(i64, i32, i16, i8, u64, u32, u16, u8, isize, usize);

impl IntoAny for bool {
    fn into_any(self) -> Result<Any> {
        Ok(scalar(sys::BOOL, self as u64))
    }
}

impl<'a> FromAny<'a> for bool {
    fn schema() -> TypeSchema {
        TypeSchema::leaf("bool")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        matches!(v.type_index(), sys::BOOL | sys::INT).then(|| v.raw().bits != 0)
    }
}

impl IntoAny for f64 {
    fn into_any(self) -> Result<Any> {
        Ok(scalar(sys::FLOAT, self.to_bits()))
    }
}

impl<'a> FromAny<'a> for f64 {
    fn schema() -> TypeSchema {
        TypeSchema::leaf("float")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        let bits = v.raw().bits;
        match v.type_index() {
            sys::FLOAT => Some(f64::from_bits(bits)),
            sys::INT | sys::BOOL => Some(bits as i64 as f64),
            _ => None,
        }
    }
}

impl IntoAny for f32 {
    fn into_any(self) -> Result<Any> {
        f64::from(self).into_any()
    }
}

impl<'a> FromAny<'a> for f32 {
    fn schema() -> TypeSchema {
        TypeSchema::leaf("float")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        f64::from_view(v).map(|x| x as f32)
    }
}

/// The bytes of a string or bytes value (`want_str` picks which family).
fn text_bytes<'a>(v: AnyView<'a>, want_str: bool) -> Option<&'a [u8]> {
    let raw = v.raw();
    let (small, object) = if want_str {
        (sys::SMALL_STR, sys::STR)
    } else {
        (sys::SMALL_BYTES, sys::BYTES)
    };
    match raw.type_index {
        t if t == small => {
            let len = (raw.small_len as usize).min(8);
            // SAFETY: inline bytes live in the value, which lives for 'a.
            let bytes: &'a [u8; 8] = unsafe { &*(&raw.bits as *const u64).cast::<[u8; 8]>() };
            Some(&bytes[..len])
        }
        t if t == object => {
            let h = v.object()?;
            // SAFETY: a string/bytes object's cell is a byte array valid
            // while the object lives, which the view guarantees for 'a.
            Some(unsafe {
                (*h.cast::<u8>()
                    .add(size_of::<sys::ObjectHeader>())
                    .cast::<ByteArray>())
                .bytes()
            })
        }
        sys::RAW_STR if want_str && raw.bits != 0 => {
            // SAFETY: a raw string argument is NUL-terminated and valid for
            // the call.
            Some(
                unsafe { core::ffi::CStr::from_ptr(raw.bits as *const core::ffi::c_char) }
                    .to_bytes(),
            )
        }
        sys::BYTE_ARRAY_PTR if !want_str && raw.bits != 0 => {
            // SAFETY: a byte-array argument is valid for the call.
            Some(unsafe { (*(raw.bits as *const ByteArray)).bytes() })
        }
        _ => None,
    }
}

fn new_text(bytes: &[u8], string: bool) -> Result<Any> {
    let mut out = RawAny::NONE;
    let input = ByteArray::of(bytes);
    // SAFETY: `input` borrows live bytes; `out` is writable.
    let rc = unsafe {
        if string {
            sys::TVMFFIStringFromByteArray(&input, &mut out)
        } else {
            sys::TVMFFIBytesFromByteArray(&input, &mut out)
        }
    };
    crate::error::check(rc)?;
    // SAFETY: an owned value from the runtime.
    Ok(unsafe { Any::from_raw(out) })
}

impl IntoAny for &str {
    fn into_any(self) -> Result<Any> {
        new_text(self.as_bytes(), true)
    }
}

impl IntoAny for String {
    fn into_any(self) -> Result<Any> {
        new_text(self.as_bytes(), true)
    }
}

impl<'a> FromAny<'a> for &'a str {
    fn schema() -> TypeSchema {
        TypeSchema::named("ffi.String", "str")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        core::str::from_utf8(text_bytes(v, true)?).ok()
    }
}

impl<'a> FromAny<'a> for String {
    fn schema() -> TypeSchema {
        TypeSchema::named("ffi.String", "str")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        <&str>::from_view(v).map(str::to_owned)
    }
}

/// Bytes (`ffi.Bytes`, Python `bytes`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bytes(pub Vec<u8>);

impl IntoAny for Bytes {
    fn into_any(self) -> Result<Any> {
        new_text(&self.0, false)
    }
}

impl<'a> FromAny<'a> for Bytes {
    fn schema() -> TypeSchema {
        TypeSchema::named("ffi.Bytes", "bytes")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        text_bytes(v, false).map(|b| Bytes(b.to_vec()))
    }
}

impl<T: IntoAny> IntoAny for Option<T> {
    fn into_any(self) -> Result<Any> {
        self.map_or(Ok(Any::none()), IntoAny::into_any)
    }
}

impl<'a, T: FromAny<'a>> FromAny<'a> for Option<T> {
    fn schema() -> TypeSchema {
        TypeSchema::generic("Optional", "Optional", vec![T::schema()])
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        if v.type_index() == sys::NONE {
            Some(None)
        } else {
            T::from_view(v).map(Some)
        }
    }
}

/// `IntoAny` and `FromAny` for a wrapper of one object handle (`$ty(Obj)`)
/// whose values are objects of type `$key` (index `$index`) or a subtype.
macro_rules! object_conversions {
    ($ty:ident, $key:literal, $index:expr) => {
        impl $crate::convert::IntoAny for $ty {
            fn into_any(self) -> $crate::error::Result<$crate::any::Any> {
                Ok($crate::any::Any::from_owned_obj(self.0))
            }
        }
        impl<'a> $crate::convert::FromAny<'a> for $ty {
            fn schema() -> $crate::convert::TypeSchema {
                $crate::convert::TypeSchema::leaf($key)
            }
            fn from_view(v: $crate::any::AnyView<'a>) -> Option<Self> {
                $crate::convert::object_of(v, $index).map($ty)
            }
        }
    };
}
pub(crate) use object_conversions;

/// A value that holds an object of `key`'s type or a subtype: the shared
/// conversion of the object wrappers (Function, Tensor, Module).
pub(crate) fn object_of(v: AnyView<'_>, type_index: i32) -> Option<Obj> {
    if !crate::types::is_instance(v.type_index(), type_index) {
        return None;
    }
    v.new_ref()
}
