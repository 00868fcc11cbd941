//! Typed signatures of packed functions: one description of each function's
//! parameter and return types yields both its `type_schema` metadata (the
//! JSON the reference attaches to every global and method) and the text its
//! argument errors quote, e.g. ``Mismatched type on argument #0 when calling:
//! `ffi.ArraySize(0: ffi.Array) -> int`. Expected `ffi.Array` but got `int` ``.
//!
//! Parameters convert through [`Param`], results through [`Ret`]; the
//! [`typed_fn!`](typed_fn) macro ties a closure's typed parameters to
//! both.
#![forbid(unsafe_code)]

use crate::abi::*;
use crate::runtime::call::function::{Args, Function};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, owned_text};
use core::ffi::c_void;
use core::mem::ManuallyDrop;

/// A type as the reference's schema describes it: a JSON type name, the
/// name shown in messages, and type arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    json: &'static str,
    text: &'static str,
    args: Vec<Schema>,
}

impl Schema {
    /// A type without arguments.
    pub const fn leaf(json: &'static str, text: &'static str) -> Schema {
        Schema {
            json,
            text,
            args: Vec::new(),
        }
    }
    /// A generic type (`Array<T>`, `Optional<T>`, `Tuple<A, B>`, ...).
    pub fn generic(json: &'static str, text: &'static str, args: Vec<Schema>) -> Schema {
        Schema { json, text, args }
    }
    /// An object type shown by its key (`ffi.Module`).
    pub const fn object(key: &'static str) -> Schema {
        Schema::leaf(key, key)
    }
    /// `Any`.
    pub const ANY: Schema = Schema::leaf("Any", "Any");
    /// `Any` shown as `AnyView` (a borrowed argument, as the reference names it).
    pub const ANY_VIEW: Schema = Schema::leaf("Any", "AnyView");
    /// `int`.
    pub const INT: Schema = Schema::leaf("int", "int");
    /// `bool`.
    pub const BOOL: Schema = Schema::leaf("bool", "bool");
    /// `str` (`ffi.String`).
    pub const STR: Schema = Schema::leaf("ffi.String", "str");
    /// `bytes` (`ffi.Bytes`).
    pub const BYTES: Schema = Schema::leaf("ffi.Bytes", "bytes");
    /// `void*`.
    pub const PTR: Schema = Schema::leaf("void*", "void*");
    /// `Device`.
    pub const DEVICE: Schema = Schema::leaf("Device", "Device");
    /// No value (`None` in JSON, `void` in messages).
    pub const VOID: Schema = Schema::leaf("None", "void");
    /// `ffi.Object`.
    pub const OBJECT: Schema = Schema::object("ffi.Object");
    /// `ffi.Function`.
    pub const FUNCTION: Schema = Schema::object("ffi.Function");
    /// `Optional<T>`.
    pub fn optional(inner: Schema) -> Schema {
        Schema::generic("Optional", "Optional", vec![inner])
    }
    /// `Array<T>`.
    pub fn array_of(elem: Schema) -> Schema {
        Schema::generic("ffi.Array", "Array", vec![elem])
    }
    /// `List<T>`.
    pub fn list_of(elem: Schema) -> Schema {
        Schema::generic("ffi.List", "List", vec![elem])
    }
    /// `Map<K, V>`.
    pub fn map_of(key: Schema, value: Schema) -> Schema {
        Schema::generic("ffi.Map", "Map", vec![key, value])
    }
    /// `Dict<K, V>`.
    pub fn dict_of(key: Schema, value: Schema) -> Schema {
        Schema::generic("ffi.Dict", "Dict", vec![key, value])
    }
    /// `Tuple<...>`.
    pub fn tuple(items: Vec<Schema>) -> Schema {
        Schema::generic("Tuple", "Tuple", items)
    }

    /// The JSON form, `{"type":"ffi.Array","args":[{"type":"Any"}]}`.
    pub fn json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"type\":\"");
        out.push_str(self.json);
        out.push('"');
        if !self.args.is_empty() {
            out.push_str(",\"args\":[");
            for (i, a) in self.args.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                a.write_json(out);
            }
            out.push(']');
        }
        out.push('}');
    }
    /// The text form used in messages, `Array<Any>`.
    pub fn text(&self) -> String {
        if self.args.is_empty() {
            return self.text.to_owned();
        }
        let args: Vec<String> = self.args.iter().map(Schema::text).collect();
        format!("{}<{}>", self.text, args.join(", "))
    }
    /// The metadata record `{"type_schema":"<json>"}` of a value of this type.
    pub fn metadata(&self) -> String {
        type_schema_metadata(&self.json())
    }
}

/// `{"type_schema":"<json, escaped>"}`.
fn type_schema_metadata(json: &str) -> String {
    let mut out = String::from("{\"type_schema\":\"");
    for c in json.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push_str("\"}");
    out
}

/// The signature of a typed packed function.
#[derive(Debug)]
pub struct Sig {
    name: &'static str,
    params: Vec<Schema>,
    ret: Schema,
    /// `name(0: T0, 1: T1) -> R`, quoted by argument errors.
    text: String,
}

impl Sig {
    /// The signature of `name(params) -> ret`.
    pub fn new(name: &'static str, params: Vec<Schema>, ret: Schema) -> Sig {
        let list: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{i}: {}", p.text()))
            .collect();
        let text = format!("{name}({}) -> {}", list.join(", "), ret.text());
        Sig {
            name,
            params,
            ret,
            text,
        }
    }
    /// The metadata record of the function.
    pub fn metadata(&self) -> String {
        let params: Vec<String> = self.params.iter().map(Schema::json).collect();
        type_schema_metadata(&format!(
            "{{\"type\":\"ffi.Function\",\"named_args\":{{\"return\":[{}],\"params\":[{}]}}}}",
            self.ret.json(),
            params.join(",")
        ))
    }
    /// Checks the argument count.
    pub fn check_len(&self, args: Args<'_>) -> Result<()> {
        if args.len() == self.params.len() {
            return Ok(());
        }
        Err(Error::type_error(format!(
            "Mismatched number of arguments when calling: `{}`. Expected {} but got {} arguments",
            self.text,
            self.params.len(),
            args.len()
        )))
    }
    /// Converts argument `i` (the count was checked). Always inlined: it
    /// is on every typed call's path, and a call returning the `Result`
    /// through memory costs more than the conversion.
    #[inline(always)]
    pub fn arg<'a, T: Param<'a>>(&self, args: Args<'a>, i: usize) -> Result<T> {
        let v = args.get(i);
        match T::from_view(v) {
            Some(t) => Ok(t),
            None => Err(self.mismatch_text(i, &T::describe(v))),
        }
    }
    /// The error for argument `i` not converting (`got` describes it).
    #[cold]
    #[inline(never)]
    fn mismatch_text(&self, i: usize, got: &str) -> Error {
        Error::type_error(format!(
            "Mismatched type on argument #{i} when calling: `{}`. Expected `{}` but got `{got}`",
            self.text,
            self.params[i].text(),
        ))
    }
}

/// The metadata of a packed (untyped, variadic) function.
fn packed_metadata() -> String {
    type_schema_metadata("{\"type\":\"ffi.Function\"}")
}

/// A parameter type: its schema and its conversion from a borrowed argument
/// (`None` when the argument does not convert).
pub trait Param<'a>: Sized {
    /// The parameter's schema.
    fn schema() -> Schema;
    /// Converts the argument.
    fn from_view(v: AnyView<'a>) -> Option<Self>;
    /// What a mismatch error says the argument was: its type key, or for a
    /// container the element that failed.
    fn describe(v: AnyView<'_>) -> String {
        crate::runtime::model::type_table::type_key_of(v.type_index())
    }
}

/// A result type: its schema and its conversion to an owned value.
pub trait Ret {
    /// The result's schema.
    fn schema() -> Schema;
    /// Converts the result.
    fn into_any(self) -> Result<Any>;
}

impl<'a> Param<'a> for AnyView<'a> {
    fn schema() -> Schema {
        Schema::ANY
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        Some(v)
    }
}

/// A borrowed argument of any type, named `AnyView` in the signature text.
#[derive(Clone, Copy)]
pub struct View<'a>(pub AnyView<'a>);

impl<'a> Param<'a> for View<'a> {
    fn schema() -> Schema {
        Schema::ANY_VIEW
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        Some(View(v))
    }
}

impl Param<'_> for i64 {
    fn schema() -> Schema {
        Schema::INT
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        v.as_i64()
    }
}

impl Param<'_> for i32 {
    fn schema() -> Schema {
        Schema::INT
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        v.as_i64().and_then(|i| i32::try_from(i).ok())
    }
}

impl Param<'_> for bool {
    fn schema() -> Schema {
        Schema::BOOL
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        v.as_i64().map(|i| i != 0)
    }
}

impl Param<'_> for *mut c_void {
    fn schema() -> Schema {
        Schema::PTR
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        v.as_opaque_ptr()
    }
}

/// A `str` argument: its text, borrowed, and the value it came as.
#[derive(Clone, Copy)]
pub struct Str<'a>(pub &'a [u8], AnyView<'a>);

impl<'a> Param<'a> for Str<'a> {
    fn schema() -> Schema {
        Schema::STR
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        v.as_str_bytes().map(|s| Str(s, v))
    }
}

/// A `bytes` argument: its content, borrowed, and the value it came as.
#[derive(Clone, Copy)]
pub struct BytesArg<'a>(pub &'a [u8], AnyView<'a>);

impl<'a> Param<'a> for BytesArg<'a> {
    fn schema() -> Schema {
        Schema::BYTES
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        v.as_bytes().map(|b| BytesArg(b, v))
    }
}

impl Str<'_> {
    /// The argument as an owned string value: the same object when it is
    /// one (small or heap), a new String for a raw C string.
    #[inline(always)]
    pub fn to_value(self) -> Result<Any> {
        owned_text(self.0, self.1, TextKind::Str)
    }
}

impl BytesArg<'_> {
    /// The argument as an owned bytes value: the same object when it is
    /// one, a new Bytes for a byte-array pointer.
    pub fn to_value(self) -> Result<Any> {
        owned_text(self.0, self.1, TextKind::Bytes)
    }
}

impl<'a, T: Param<'a>> Param<'a> for Option<T> {
    fn schema() -> Schema {
        Schema::optional(T::schema())
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        if v.type_index() == kTVMFFINone {
            Some(None)
        } else {
            T::from_view(v).map(Some)
        }
    }
}

/// An object type the signature names: its key (shown in messages and
/// schemas) and the type indices it accepts.
pub trait ObjType {
    /// The schema of the type.
    fn schema() -> Schema;
    /// Whether an object of `type_index` is one of these.
    fn accepts(type_index: i32) -> bool;
}

/// A borrowed object argument of type `K`, valid for the call.
pub struct Obj<'a, K> {
    obj: ManuallyDrop<ObjectRef>,
    _marker: core::marker::PhantomData<(&'a (), K)>,
}

impl<K> core::ops::Deref for Obj<'_, K> {
    type Target = ObjectRef;
    fn deref(&self) -> &ObjectRef {
        &self.obj
    }
}

impl<'a, K: ObjType> Param<'a> for Obj<'a, K> {
    fn schema() -> Schema {
        K::schema()
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        let obj = v.borrow_object()?;
        K::accepts(obj.type_index()).then_some(Obj {
            obj,
            _marker: core::marker::PhantomData,
        })
    }
}

/// An owned object result of type `K`.
pub struct Owned<K>(pub ObjectRef, pub core::marker::PhantomData<K>);

impl<K> Owned<K> {
    /// Wraps an object known to be a `K`.
    pub fn new(obj: ObjectRef) -> Self {
        Owned(obj, core::marker::PhantomData)
    }
}

impl<K: ObjType> Ret for Owned<K> {
    fn schema() -> Schema {
        K::schema()
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self.0))
    }
}

/// Declares a marker type for an object type with a fixed index. It
/// accepts the type's registered subclasses too (the reference's
/// `IsObjectInstance`), unless declared `exact`: final types (the access
/// paths, ...) and the built-in depth-1 types (registered without child
/// slots, see `object::Cell`) have no subclasses, so the index alone is the
/// check.
macro_rules! obj_type {
    ($(#[$doc:meta])* $name:ident, $schema:expr, exact $($index:path),+) => {
        $crate::runtime::call::signature::obj_type!(@def $(#[$doc])* $name, $schema,
            |type_index| $(type_index == $index)||+);
    };
    ($(#[$doc:meta])* $name:ident, $schema:expr, $index:path) => {
        $crate::runtime::call::signature::obj_type!(@def $(#[$doc])* $name, $schema,
            |type_index| $crate::runtime::model::lineage::is_instance(type_index, $index));
    };
    (@def $(#[$doc:meta])* $name:ident, $schema:expr, |$ti:ident| $accepts:expr) => {
        $(#[$doc])*
        pub struct $name;
        impl ObjType for $name {
            fn schema() -> Schema {
                $schema
            }
            fn accepts($ti: i32) -> bool {
                $accepts
            }
        }
    };
}
pub(crate) use obj_type;

obj_type!(
    /// `ffi.Array`.
    ArrayT,
    Schema::object("ffi.Array"),
    exact kTVMFFIArray
);
obj_type!(
    /// `ffi.List`.
    ListT,
    Schema::object("ffi.List"),
    exact kTVMFFIList
);
obj_type!(
    /// `ffi.Map`.
    MapT,
    Schema::object("ffi.Map"),
    exact kTVMFFIMap
);
obj_type!(
    /// `ffi.Dict`.
    DictT,
    Schema::object("ffi.Dict"),
    exact kTVMFFIDict
);
obj_type!(
    /// `ffi.Module`.
    ModuleT,
    Schema::object("ffi.Module"),
    exact kTVMFFIModule
);
obj_type!(
    /// `ffi.Function`.
    FunctionT,
    Schema::FUNCTION,
    exact kTVMFFIFunction
);

/// Any object (`ffi.Object`).
pub struct ObjectT;
impl ObjType for ObjectT {
    fn schema() -> Schema {
        Schema::OBJECT
    }
    fn accepts(type_index: i32) -> bool {
        type_index >= kTVMFFIStaticObjectBegin
    }
}

impl Ret for () {
    fn schema() -> Schema {
        Schema::VOID
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::NONE)
    }
}

impl Ret for Any {
    fn schema() -> Schema {
        Schema::ANY
    }
    fn into_any(self) -> Result<Any> {
        Ok(self)
    }
}

impl Ret for i64 {
    fn schema() -> Schema {
        Schema::INT
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self))
    }
}

impl Ret for bool {
    fn schema() -> Schema {
        Schema::BOOL
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self))
    }
}

impl Ret for Function {
    fn schema() -> Schema {
        Schema::FUNCTION
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self.into_object()))
    }
}

impl Ret for DLDevice {
    fn schema() -> Schema {
        Schema::DEVICE
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::device(self))
    }
}

/// A `str` result (small or heap string by length, as the reference).
pub struct StrRet(pub Vec<u8>);

impl Ret for StrRet {
    fn schema() -> Schema {
        Schema::STR
    }
    fn into_any(self) -> Result<Any> {
        Ok(crate::runtime::model::string::make_text(
            &self.0,
            crate::runtime::model::string::TextKind::Str,
        ))
    }
}

/// A `str` result always made a heap String object, as the reference does
/// for strings it builds from a `std::string` it moves.
pub struct HeapStr(pub Vec<u8>);

impl Ret for HeapStr {
    fn schema() -> Schema {
        Schema::STR
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(
            crate::runtime::model::string::text_object_from_vec(
                self.0,
                crate::runtime::model::string::TextKind::Str,
            ),
        ))
    }
}

/// A `str` result that is already a string value (small or heap).
pub struct StrAny(pub Any);

impl Ret for StrAny {
    fn schema() -> Schema {
        Schema::STR
    }
    fn into_any(self) -> Result<Any> {
        Ok(self.0)
    }
}

/// A `bytes` result that is already a bytes value.
pub struct BytesAny(pub Any);

impl Ret for BytesAny {
    fn schema() -> Schema {
        Schema::BYTES
    }
    fn into_any(self) -> Result<Any> {
        Ok(self.0)
    }
}

impl<T: Ret> Ret for Option<T> {
    fn schema() -> Schema {
        Schema::optional(T::schema())
    }
    fn into_any(self) -> Result<Any> {
        match self {
            Some(v) => v.into_any(),
            None => Ok(Any::NONE),
        }
    }
}

/// An `Array<T>` result whose schema names its element type.
pub struct ArrayRet<T>(pub ObjectRef, pub core::marker::PhantomData<T>);

impl<T> ArrayRet<T> {
    /// Wraps an Array object.
    pub fn new(obj: ObjectRef) -> Self {
        ArrayRet(obj, core::marker::PhantomData)
    }
}

impl<T: Ret> Ret for ArrayRet<T> {
    fn schema() -> Schema {
        Schema::array_of(T::schema())
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self.0))
    }
}

/// A function with its name and metadata, ready to be registered.
pub struct Described {
    /// The function's name.
    pub name: &'static str,
    /// The function.
    pub func: Function,
    /// Its metadata record (`{"type_schema":...}`).
    pub metadata: String,
}

impl Described {
    /// A packed (variadic) function.
    pub fn packed(name: &'static str, func: Function) -> Described {
        Described {
            name,
            func,
            metadata: packed_metadata(),
        }
    }
}

/// A typed function: its signature and a body over the checked arguments.
pub fn typed_function(
    sig: Sig,
    body: impl Fn(Args<'_>, &Sig) -> Result<Any> + Send + Sync + 'static,
) -> Described {
    let name = sig.name;
    let metadata = sig.metadata();
    let func = Function::from_closure(move |args| {
        sig.check_len(args)?;
        body(args, &sig)
    });
    Described {
        name,
        func,
        metadata,
    }
}

/// Builds a typed packed function from a closure with typed parameters:
/// `typed_fn!("ffi.ArraySize", |a: Obj<ArrayT>| -> i64 { ... })` returns
/// a [`Described`] function. Parameters convert with [`Param`] (a mismatch
/// names the signature), the result with [`Ret`]. Where the closure's
/// header does not fit on the call's line, the call is written with braces
/// (`typed_fn! { "name", |..| -> T { .. } }`): rustfmt leaves those as
/// written, where it would break such a header apart inside parentheses.
macro_rules! typed_fn {
    ($name:expr, || -> $ret:ty $body:block) => {
        $crate::runtime::call::signature::typed_fn!($name, | | -> $ret $body)
    };
    ($name:expr, |$($arg:ident : $ty:ty),* $(,)?| -> $ret:ty $body:block) => {{
        let sig = $crate::runtime::call::signature::Sig::new(
            $name,
            vec![$(<$ty as $crate::runtime::call::signature::Param<'_>>::schema()),*],
            <$ret as $crate::runtime::call::signature::Ret>::schema(),
        );
        $crate::runtime::call::signature::typed_function(sig, move |args, sig| {
            let index = 0usize;
            $(
                let $arg: $ty = sig.arg(args, index)?;
                let index = index + 1;
            )*
            let _ = (index, args, sig);
            // A closure, so that `?` and `return` in the body leave the body.
            #[allow(clippy::redundant_closure_call)]
            let result: $crate::runtime::Result<$ret> = (|| $body)();
            $crate::runtime::call::signature::Ret::into_any(result?)
        })
    }};
}
pub(crate) use typed_fn;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_json_and_text() {
        let s = Schema::optional(Schema::tuple(vec![Schema::INT, Schema::FUNCTION]));
        assert_eq!(
            s.json(),
            r#"{"type":"Optional","args":[{"type":"Tuple","args":[{"type":"int"},{"type":"ffi.Function"}]}]}"#
        );
        assert_eq!(s.text(), "Optional<Tuple<int, ffi.Function>>");
    }

    #[test]
    fn signature_metadata_and_text() {
        let sig = Sig::new(
            "ffi.ArraySize",
            vec![Schema::object("ffi.Array")],
            Schema::INT,
        );
        assert_eq!(sig.text, "ffi.ArraySize(0: ffi.Array) -> int");
        assert_eq!(
            sig.metadata(),
            r#"{"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"int\"}],\"params\":[{\"type\":\"ffi.Array\"}]}}"}"#
        );
    }
}
