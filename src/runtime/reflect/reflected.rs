//! The reflected built-in types: the reference's fields, methods, metadata
//! and type attributes of `ffi.Module`, `ffi.VisitInterrupt`, `ffi.BigInt`
//! and the ten dynamic types it registers at start-up (`ffi.EnumState` at
//! 128 through `ffi.StructuralKey` at 137, in the same order, so dynamic
//! indices match the reference's), plus the `__ffi_convert__` attributes of
//! the static object types.
//!
//! Objects of these types may also be made by C++ code compiled with the
//! official headers (its own allocation, its own deleter), so every payload
//! here is a `#[repr(C)]` mirror of the reference's class layout and code
//! reading them goes by layout only.
//!
//! One file (about 1,000 lines): it is a table, one entry per built-in type
//! in the reference's registration order, which fixes the dynamic indices;
//! split, that order would span files.

use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{
    ArrayRet, Described, FunctionT, Obj, ObjType, ObjectT, Owned, Schema, Str, StrRet, obj_type,
};
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::lineage::is_instance;
use crate::runtime::model::object::{ObjectRef, new_object};
use crate::runtime::model::type_table::Table;
use crate::runtime::reflect::field::{self, Storage};
use crate::runtime::reflect::type_def::{TypeDef, create, method_name};
use crate::runtime::{value::map, value::seq};
use core::ffi::c_void;
use core::mem::offset_of;

/// `ffi.EnumState`.
pub const kEnumState: i32 = 128;
/// `ffi.Enum`.
pub const kEnum: i32 = 129;
/// `ffi.IntEnum`.
pub const kIntEnum: i32 = 130;
/// `ffi.StrEnum`.
pub const kStrEnum: i32 = 131;
/// `ffi.reflection.AccessStep`.
pub const kAccessStep: i32 = 132;
/// `ffi.reflection.AccessPath`.
pub const kAccessPath: i32 = 133;
/// `ffi.StructuralVisitor`. The reference's C++ static initialisers
/// register it and `ffi.VisitErrorContext` in link order, which MSVC's
/// build of it reverses: on Windows the two indices are swapped.
pub const kStructuralVisitor: i32 = if cfg!(windows) { 135 } else { 134 };
/// `ffi.VisitErrorContext` (see [`kStructuralVisitor`]).
pub const kVisitErrorContext: i32 = if cfg!(windows) { 134 } else { 135 };
/// `ffi.StructuralMutator`.
pub const kStructuralMutator: i32 = 136;
/// `ffi.StructuralKey`.
pub const kStructuralKey: i32 = 137;

/// `ffi.VisitInterrupt`: `Any value` (total size 40).
#[repr(C)]
#[derive(Clone, Default)]
pub struct VisitInterruptObj {
    /// The value carried out of the visit.
    pub value: AnyField,
}

/// `ffi.EnumState`: entries (List), indexes (Dict), attrs (Dict).
#[repr(C)]
#[derive(Clone)]
pub struct EnumStateObj {
    /// Enum singletons in registration order.
    pub entries: Option<ObjectRef>,
    /// Integer and string indices to singletons.
    pub indexes: Option<ObjectRef>,
    /// Attribute columns keyed by singleton.
    pub attrs: Option<ObjectRef>,
}

impl Default for EnumStateObj {
    fn default() -> Self {
        let dict = || map::new_map(kTVMFFIDict, Vec::new()).ok();
        EnumStateObj {
            entries: Some(seq::new_list(Vec::new())),
            indexes: dict(),
            attrs: dict(),
        }
    }
}

/// `ffi.Enum` (and `ffi.IntEnum`, `ffi.StrEnum`): `int64 _int_index`,
/// `String _str_index`.
#[repr(C)]
#[derive(Clone)]
pub struct EnumObj {
    /// The canonical integer index.
    pub int_index: i64,
    /// The canonical string index (a `String`, 16 bytes).
    pub str_index: AnyField,
}

impl Default for EnumObj {
    fn default() -> Self {
        EnumObj {
            int_index: 0,
            str_index: AnyField(crate::runtime::model::string::make_text(
                b"",
                crate::runtime::model::string::TextKind::Str,
            )),
        }
    }
}

/// `ffi.reflection.AccessStep`: `int32 kind`, `Any key`.
#[repr(C)]
#[derive(Clone, Default)]
pub struct AccessStepObj {
    /// An `AccessKind`.
    pub kind: i32,
    /// The attribute name, index or map key.
    pub key: AnyField,
}

/// `ffi.reflection.AccessPath`: parent, step, depth.
#[repr(C)]
#[derive(Clone, Default)]
pub struct AccessPathObj {
    /// The parent path (None at the root).
    pub parent: Option<ObjectRef>,
    /// The last step (None at the root).
    pub step: Option<ObjectRef>,
    /// The number of steps.
    pub depth: i32,
}

/// `ffi.VisitErrorContext`: reverse_visit_pattern (List), prev_error_context.
#[repr(C)]
#[derive(Clone)]
pub struct VisitErrorContextObj {
    /// The visit pattern, innermost first.
    pub reverse_visit_pattern: Option<ObjectRef>,
    /// The enclosing context, if any.
    pub prev_error_context: Option<ObjectRef>,
}

impl Default for VisitErrorContextObj {
    fn default() -> Self {
        VisitErrorContextObj {
            reverse_visit_pattern: Some(seq::new_list(Vec::new())),
            prev_error_context: None,
        }
    }
}

/// `ffi.StructuralKey`: `Any key`, `int64 hash_i64`.
#[repr(C)]
#[derive(Clone, Default)]
pub struct StructuralKeyObj {
    /// The key.
    pub key: AnyField,
    /// Its structural hash.
    pub hash_i64: i64,
}

/// An `Any` stored in an object (None by default).
#[repr(transparent)]
#[derive(Clone)]
pub struct AnyField(pub Any);

impl Default for AnyField {
    fn default() -> Self {
        AnyField(Any::NONE)
    }
}

const _: () = {
    assert!(size_of::<Option<ObjectRef>>() == 8);
    assert!(size_of::<AnyField>() == 16);
    assert!(size_of::<VisitInterruptObj>() == 16);
    assert!(size_of::<EnumStateObj>() == 24);
    assert!(size_of::<EnumObj>() == 24 && offset_of!(EnumObj, str_index) == 8);
    assert!(size_of::<AccessStepObj>() == 24 && offset_of!(AccessStepObj, key) == 8);
    assert!(size_of::<AccessPathObj>() == 24 && offset_of!(AccessPathObj, depth) == 16);
    assert!(size_of::<VisitErrorContextObj>() == 16);
    assert!(size_of::<StructuralKeyObj>() == 24 && offset_of!(StructuralKeyObj, hash_i64) == 16);
};

obj_type!(
    /// `ffi.reflection.AccessPath`.
    AccessPathT,
    Schema::object("ffi.reflection.AccessPath"),
    exact kAccessPath
);
obj_type!(
    /// `ffi.reflection.AccessStep`.
    AccessStepT,
    Schema::object("ffi.reflection.AccessStep"),
    exact kAccessStep
);
obj_type!(
    /// `ffi.StructuralKey`.
    StructuralKeyT,
    Schema::object("ffi.StructuralKey"),
    exact kStructuralKey
);
obj_type!(
    /// `ffi.VisitInterrupt`.
    VisitInterruptT,
    Schema::object("ffi.VisitInterrupt"),
    exact kTVMFFIVisitInterrupt
);

/// The payload of an AccessPath object (ours or a C++ one: same layout).
fn path_of(obj: &ObjectRef) -> &AccessPathObj {
    debug_assert_eq!(obj.type_index(), kAccessPath);
    // SAFETY: AccessPath objects have the AccessPathObj layout (checked by
    // the caller through the type index).
    unsafe { obj.payload::<AccessPathObj>() }
}

/// The payload of an AccessStep object.
fn step_of(obj: &ObjectRef) -> &AccessStepObj {
    debug_assert_eq!(obj.type_index(), kAccessStep);
    // SAFETY: as `path_of`.
    unsafe { obj.payload::<AccessStepObj>() }
}

/// The parent of a path, if it is an AccessPath.
fn parent_of(path: &AccessPathObj) -> Option<&ObjectRef> {
    path.parent
        .as_ref()
        .filter(|p| p.type_index() == kAccessPath)
}

/// A new AccessStep.
pub fn new_step(kind: i32, key: Any) -> ObjectRef {
    new_object(
        kAccessStep,
        AccessStepObj {
            kind,
            key: AnyField(key),
        },
    )
}

/// The root AccessPath.
pub fn root_path() -> ObjectRef {
    new_object(kAccessPath, AccessPathObj::default())
}

/// `path` extended by `step`.
pub fn extend_path(path: &ObjectRef, step: ObjectRef) -> ObjectRef {
    let depth = path_of(path).depth + 1;
    new_object(
        kAccessPath,
        AccessPathObj {
            parent: Some(path.clone()),
            step: Some(step),
            depth,
        },
    )
}

/// The steps of a path, root first.
pub(crate) fn path_steps(path: &ObjectRef) -> Vec<ObjectRef> {
    let mut steps = Vec::new();
    let mut current = path_of(path);
    while let (Some(parent), Some(step)) = (parent_of(current), current.step.as_ref()) {
        steps.push(step.clone());
        current = path_of(parent);
    }
    steps.reverse();
    steps
}

/// Whether two steps are equal (same kind, `AnyEqual` keys).
fn step_equal(a: &ObjectRef, b: &ObjectRef) -> Result<bool> {
    let (a, b) = (step_of(a), step_of(b));
    Ok(a.kind == b.kind && crate::runtime::value::hash::any_equal(a.key.0.view(), b.key.0.view())?)
}

/// Whether two paths have equal steps.
fn path_equal(a: &ObjectRef, b: &ObjectRef) -> Result<bool> {
    if path_of(a).depth != path_of(b).depth {
        return Ok(false);
    }
    let (mut a, mut b) = (a.clone(), b.clone());
    loop {
        if a == b {
            return Ok(true);
        }
        let (pa, pb) = (path_of(&a), path_of(&b));
        let (Some(na), Some(nb)) = (parent_of(pa).cloned(), parent_of(pb).cloned()) else {
            return Ok(true);
        };
        match (&pa.step, &pb.step) {
            (Some(sa), Some(sb)) if step_equal(sa, sb)? => {}
            _ => return Ok(false),
        }
        (a, b) = (na, nb);
    }
}

/// Whether `a` is a prefix of `b`.
fn is_prefix_of(a: &ObjectRef, b: &ObjectRef) -> Result<bool> {
    let depth = path_of(a).depth;
    let mut b = b.clone();
    while path_of(&b).depth > depth {
        match parent_of(path_of(&b)).cloned() {
            Some(parent) => b = parent,
            None => return Ok(false),
        }
    }
    path_equal(a, &b)
}

/// `__ffi_convert__` of a built-in type: the value itself when `accepts`
/// takes it, else "Cannot cast from `X` to `T`".
fn convert_fn(target: &'static str, accepts: fn(AnyView<'_>) -> Option<Any>) -> Function {
    Function::from_closure(move |args| {
        args.expect_len("__ffi_convert__", 1)?;
        let v = args.get(0);
        accepts(v).ok_or_else(|| {
            Error::type_error(format!(
                "Cannot cast from `{}` to `{target}`",
                crate::runtime::model::type_table::type_key_of(v.type_index())
            ))
        })
    })
}

/// The value when it is an object of exactly `index` (the built-in
/// depth-1 types, which have no subclasses).
fn exact(v: AnyView<'_>, index: i32) -> Option<Any> {
    (v.type_index() == index)
        .then(|| v.to_owned_any().ok())
        .flatten()
}

/// The value when it is an object of `index` or a registered subclass (the
/// reference's `def_convert` of a type with subclasses, `IsObjectInstance`).
fn instance(v: AnyView<'_>, index: i32) -> Option<Any> {
    is_instance(v.type_index(), index)
        .then(|| v.to_owned_any().ok())
        .flatten()
}

/// A copy of an Array/List `from` as a `to` sequence.
fn recast_seq(v: AnyView<'_>, from: i32, to: i32) -> Option<Any> {
    let obj = v.to_object().filter(|o| o.type_index() == from)?;
    let items = seq::elements(&obj, from)
        .ok()?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|e| unsafe { AnyView::from_raw(e) }.to_owned_any().ok())
        .collect::<Option<Vec<Any>>>()?;
    Some(Any::from(if to == kTVMFFIArray {
        seq::new_array(items)
    } else {
        seq::new_list(items)
    }))
}

/// A copy of a Map/Dict `from` as a `to` map.
fn recast_map(v: AnyView<'_>, from: i32, to: i32) -> Option<Any> {
    let obj = v.to_object().filter(|o| o.type_index() == from)?;
    map::new_map(to, map::items(&obj).ok()?).ok().map(Any::from)
}

/// `__ffi_convert__` of the static object types.
fn register_converters(t: &mut Table) {
    let mut def = |key: &'static str, index: i32, f: Function| {
        TypeDef::existing(t, key, index).attr_fn("__ffi_convert__", f);
    };
    def(
        "ffi.Object",
        kTVMFFIObject,
        convert_fn("ffi.Object", |v| match v.type_index() {
            kTVMFFINone => Some(Any::NONE),
            t if is_object_index(t) => v.to_owned_any().ok(),
            kTVMFFISmallStr | kTVMFFIRawStr => v.as_str_bytes().map(|s| {
                Any::from(crate::runtime::model::string::new_text_object(
                    s,
                    crate::runtime::model::string::TextKind::Str,
                ))
            }),
            kTVMFFISmallBytes | kTVMFFIByteArrayPtr => v.as_bytes().map(|s| {
                Any::from(crate::runtime::model::string::new_text_object(
                    s,
                    crate::runtime::model::string::TextKind::Bytes,
                ))
            }),
            _ => None,
        }),
    );
    def(
        "ffi.String",
        kTVMFFIStr,
        convert_fn("str", |v| {
            v.as_str_bytes().map(|s| {
                crate::runtime::model::string::make_text(
                    s,
                    crate::runtime::model::string::TextKind::Str,
                )
            })
        }),
    );
    def(
        "ffi.Bytes",
        kTVMFFIBytes,
        convert_fn("bytes", |v| {
            v.as_bytes().map(|s| {
                crate::runtime::model::string::make_text(
                    s,
                    crate::runtime::model::string::TextKind::Bytes,
                )
            })
        }),
    );
    def(
        "ffi.Error",
        kTVMFFIError,
        convert_fn("ffi.Error", |v| exact(v, kTVMFFIError)),
    );
    def(
        "ffi.Function",
        kTVMFFIFunction,
        convert_fn("ffi.Function", |v| exact(v, kTVMFFIFunction)),
    );
    def(
        "ffi.Shape",
        kTVMFFIShape,
        convert_fn("ffi.Shape", |v| {
            exact(v, kTVMFFIShape).or_else(|| {
                // An Array/List of ints converts, as the reference's fallback.
                let obj = v.to_object()?;
                if !matches!(obj.type_index(), kTVMFFIArray | kTVMFFIList) {
                    return None;
                }
                let dims = seq::elements(&obj, obj.type_index())
                    .ok()?
                    .iter()
                    // SAFETY: stored elements are valid.
                    .map(|e| unsafe { AnyView::from_raw(e) }.as_i64())
                    .collect::<Option<Vec<i64>>>()?;
                Some(Any::from(crate::runtime::value::scalar::new_shape(&dims)))
            })
        }),
    );
    def(
        "ffi.Tensor",
        kTVMFFITensor,
        convert_fn("ffi.Tensor", |v| exact(v, kTVMFFITensor)),
    );
    // Each container converts from its sibling by copy (Array <-> List,
    // Map <-> Dict), as the reference's container traits do.
    def(
        "ffi.Array",
        kTVMFFIArray,
        convert_fn("Array<Any>", |v| {
            exact(v, kTVMFFIArray).or_else(|| recast_seq(v, kTVMFFIList, kTVMFFIArray))
        }),
    );
    def(
        "ffi.Map",
        kTVMFFIMap,
        convert_fn("Map<Any, Any>", |v| {
            exact(v, kTVMFFIMap).or_else(|| recast_map(v, kTVMFFIDict, kTVMFFIMap))
        }),
    );
    def(
        "ffi.List",
        kTVMFFIList,
        convert_fn("List<Any>", |v| {
            exact(v, kTVMFFIList).or_else(|| recast_seq(v, kTVMFFIArray, kTVMFFIList))
        }),
    );
    def(
        "ffi.Dict",
        kTVMFFIDict,
        convert_fn("Dict<Any, Any>", |v| {
            exact(v, kTVMFFIDict).or_else(|| recast_map(v, kTVMFFIMap, kTVMFFIDict))
        }),
    );
}

/// Registers every reflected built-in type, in the reference's order.
pub fn register(t: &mut Table) {
    register_converters(t);
    TypeDef::existing(t, "ffi.Module", kTVMFFIModule)
        // Every module is a C++ ModuleObj: `imports_` is a plain field.
        .field(
            "imports_",
            "",
            0,
            Storage::Object,
            0,
            kTVMFFIArray,
            Schema::array_of(Schema::ANY),
        )
        .final_(true);
    TypeDef::existing(t, "ffi.VisitInterrupt", kTVMFFIVisitInterrupt)
        .metadata(
            Some(create::<VisitInterruptObj, kTVMFFIVisitInterrupt>),
            40,
            0,
        )
        .field(
            "value",
            "",
            kTVMFFIFieldFlagBitMaskHasDefault,
            Storage::Any,
            0,
            -1,
            Schema::ANY,
        )
        .creatable::<VisitInterruptObj>()
        .final_(true);
    register_big_int(t);

    let list_obj = || Schema::list_of(Schema::OBJECT);
    TypeDef::dynamic(t, "ffi.EnumState", kTVMFFIObject, 1, kEnumState)
        .metadata(Some(create::<EnumStateObj, kEnumState>), 48, 0)
        .field(
            "entries",
            "Enum singletons in registration order.",
            kTVMFFIFieldFlagBitMaskInitOff,
            Storage::Object,
            offset_of!(EnumStateObj, entries),
            kTVMFFIList,
            list_obj(),
        )
        .field(
            "indexes",
            "Canonical integer and string indices to enum singletons.",
            kTVMFFIFieldFlagBitMaskInitOff,
            Storage::Object,
            offset_of!(EnumStateObj, indexes),
            kTVMFFIObject,
            Schema::dict_of(Schema::ANY, Schema::OBJECT),
        )
        .field(
            "attrs",
            "Extensible-attribute columns keyed by enum singleton.",
            kTVMFFIFieldFlagBitMaskInitOff,
            Storage::Object,
            offset_of!(EnumStateObj, attrs),
            kTVMFFIObject,
            Schema::dict_of(Schema::STR, Schema::dict_of(Schema::OBJECT, Schema::ANY)),
        )
        .creatable::<EnumStateObj>()
        .explicit_init(
            typed_fn!("ffi.EnumState.__ffi_init__", || -> Owned<ObjectT> {
                Ok(Owned::new(new_object(kEnumState, EnumStateObj::default())))
            }),
            "",
        )
        .final_(true);

    let int_doc = "Canonical integer index.";
    let str_doc = "Canonical string index.";
    TypeDef::dynamic(t, "ffi.Enum", kTVMFFIObject, 1, kEnum)
        .metadata(
            Some(create::<EnumObj, kEnum>),
            48,
            kTVMFFISEqHashKindUniqueInstance,
        )
        .field(
            "_int_index",
            int_doc,
            kTVMFFIFieldFlagBitMaskSEqHashIgnore,
            Storage::I64,
            offset_of!(EnumObj, int_index),
            kTVMFFIInt,
            Schema::INT,
        )
        .field(
            "_str_index",
            str_doc,
            0,
            Storage::Str,
            offset_of!(EnumObj, str_index),
            -1,
            Schema::STR,
        )
        .creatable::<EnumObj>()
        .final_(false);
    let value_flags = kTVMFFIFieldFlagBitMaskInitOff | kTVMFFIFieldFlagBitMaskSEqHashIgnore;
    TypeDef::dynamic(t, "ffi.IntEnum", kEnum, 2, kIntEnum)
        .metadata(
            Some(create::<EnumObj, kIntEnum>),
            48,
            kTVMFFISEqHashKindUniqueInstance,
        )
        .field(
            "value",
            int_doc,
            value_flags,
            Storage::I64,
            offset_of!(EnumObj, int_index),
            kTVMFFIInt,
            Schema::INT,
        )
        .creatable::<EnumObj>()
        .attr_fn(
            "__ffi_convert__",
            convert_fn("ffi.IntEnum", |v| instance(v, kIntEnum)),
        )
        .final_(false);
    TypeDef::dynamic(t, "ffi.StrEnum", kEnum, 2, kStrEnum)
        .metadata(
            Some(create::<EnumObj, kStrEnum>),
            48,
            kTVMFFISEqHashKindUniqueInstance,
        )
        .field(
            "value",
            str_doc,
            value_flags,
            Storage::Str,
            offset_of!(EnumObj, str_index),
            -1,
            Schema::STR,
        )
        .creatable::<EnumObj>()
        .attr_fn(
            "__ffi_convert__",
            convert_fn("ffi.StrEnum", |v| instance(v, kStrEnum)),
        )
        .final_(false);

    register_access_types(t);

    if cfg!(windows) {
        register_visit_error_context(t);
        register_structural_visitor(t);
    } else {
        register_structural_visitor(t);
        register_visit_error_context(t);
    }
    TypeDef::dynamic(
        t,
        "ffi.StructuralMutator",
        kTVMFFIObject,
        1,
        kStructuralMutator,
    )
    .metadata(None, 40, 0)
    .uncopyable()
    .final_(false);
}

/// Registers `ffi.StructuralVisitor` (see [`kStructuralVisitor`]).
fn register_structural_visitor(t: &mut Table) {
    TypeDef::dynamic(
        t,
        "ffi.StructuralVisitor",
        kTVMFFIObject,
        1,
        kStructuralVisitor,
    )
    .metadata(None, 40, 0)
    .uncopyable()
    .final_(false);
}

/// Registers `ffi.VisitErrorContext` (see [`kStructuralVisitor`]).
fn register_visit_error_context(t: &mut Table) {
    TypeDef::dynamic(
        t,
        "ffi.VisitErrorContext",
        kTVMFFIObject,
        1,
        kVisitErrorContext,
    )
    .metadata(
        Some(create::<VisitErrorContextObj, kVisitErrorContext>),
        40,
        0,
    )
    .field(
        "reverse_visit_pattern",
        "",
        0,
        Storage::Object,
        offset_of!(VisitErrorContextObj, reverse_visit_pattern),
        kTVMFFIList,
        Schema::list_of(Schema::OBJECT),
    )
    .field(
        "prev_error_context",
        "",
        0,
        Storage::Object,
        offset_of!(VisitErrorContextObj, prev_error_context),
        -1,
        Schema::optional(Schema::OBJECT),
    )
    .creatable::<VisitErrorContextObj>()
    .final_(true);
}

/// The words of a BigInt (or int) value.
fn words_of(v: AnyView<'_>) -> Result<&[i64]> {
    crate::runtime::value::scalar::big_int_words(v)
        .ok_or_else(|| field::convert_error(v, "ffi.BigInt"))
}

/// `__any_hash__` of BigInt (native: `TVMFFIAny(const Any&)`), so BigInt
/// keys hash by value in maps, also when C++ code probes them.
unsafe extern "C" fn big_int_any_hash(value: *const TVMFFIAny) -> TVMFFIAny {
    crate::runtime::model::boundary::catch_or(TVMFFIAny::NONE, || {
        // SAFETY: the caller passes a valid value.
        let v = unsafe { AnyView::from_raw(&*value) };
        let result =
            words_of(v).map(|w| Any::from(crate::runtime::value::scalar::big_int_hash(w) as i64));
        result
            .unwrap_or_else(|e| Any::from(e.into_object()))
            .into_raw()
    })
}

/// `__any_equal__` of BigInt (native: `TVMFFIAny(const Any&, const Any&)`).
unsafe extern "C" fn big_int_any_equal(lhs: *const TVMFFIAny, rhs: *const TVMFFIAny) -> TVMFFIAny {
    crate::runtime::model::boundary::catch_or(TVMFFIAny::NONE, || {
        // SAFETY: the caller passes valid values.
        let (l, r) = unsafe { (AnyView::from_raw(&*lhs), AnyView::from_raw(&*rhs)) };
        let result = words_of(l).and_then(|a| Ok(Any::from(a == words_of(r)?)));
        result
            .unwrap_or_else(|e| Any::from(e.into_object()))
            .into_raw()
    })
}

/// BigInt's value semantics: hashing and equality as map keys, the
/// recursive comparison hooks, and its JSON form (a decimal string).
fn register_big_int(t: &mut Table) {
    const KEY: &str = "ffi.BigInt";
    let hash_fn = big_int_any_hash as unsafe extern "C" fn(*const TVMFFIAny) -> TVMFFIAny;
    let equal_fn =
        big_int_any_equal as unsafe extern "C" fn(*const TVMFFIAny, *const TVMFFIAny) -> TVMFFIAny;
    TypeDef::existing(t, KEY, kTVMFFIBigInt)
        .attr("__any_hash__", Any::opaque_ptr(hash_fn as *mut c_void))
        .attr("__any_equal__", Any::opaque_ptr(equal_fn as *mut c_void))
        .attr_fn(
            "__ffi_eq__",
            typed_fn!(method_name(KEY, "__ffi_eq__"), |l: AnyView<'_>,
                                                       r: AnyView<'_>,
                                                       _f: AnyView<'_>|
             -> bool {
                Ok(words_of(l)? == words_of(r)?)
            })
            .func,
        )
        .attr_fn(
            "__ffi_compare__",
            typed_fn!(method_name(KEY, "__ffi_compare__"), |l: AnyView<'_>,
                                                            r: AnyView<'_>,
                                                            _f: AnyView<'_>|
             -> i64 {
                Ok(i64::from(crate::runtime::value::scalar::big_int_compare(
                    words_of(l)?,
                    words_of(r)?,
                )))
            })
            .func,
        )
        .attr_fn(
            "__ffi_hash__",
            typed_fn!(method_name(KEY, "__ffi_hash__"), |v: AnyView<'_>,
                                                         _f: AnyView<'_>|
             -> i64 {
                Ok(crate::runtime::value::scalar::big_int_hash(words_of(v)?) as i64)
            })
            .func,
        )
        .attr_fn(
            "__data_to_json__",
            typed_fn!(
                method_name(KEY, "__data_to_json__"),
                |v: AnyView<'_>| -> Any {
                    let text = crate::runtime::value::scalar::big_int_to_string(words_of(v)?);
                    Ok(crate::runtime::model::string::make_text(
                        text.as_bytes(),
                        crate::runtime::model::string::TextKind::Str,
                    ))
                }
            )
            .func,
        )
        .attr_fn(
            "__data_from_json__",
            typed_fn!(
                method_name(KEY, "__data_from_json__"),
                |v: AnyView<'_>| -> Any {
                    let text = v
                        .as_str_bytes()
                        .ok_or_else(|| field::convert_error(v, "str"))?;
                    crate::runtime::value::scalar::big_int_from_decimal(text)
                        .ok_or_else(|| Error::value("Invalid decimal string for ffi.BigInt"))
                }
            )
            .func,
        )
        .final_(true);
}

/// `ffi.reflection.AccessStep` and `ffi.reflection.AccessPath`.
fn register_access_types(t: &mut Table) {
    const STEP: &str = "ffi.reflection.AccessStep";
    const PATH: &str = "ffi.reflection.AccessPath";
    TypeDef::dynamic(t, STEP, kTVMFFIObject, 1, kAccessStep)
        .metadata(
            Some(create::<AccessStepObj, kAccessStep>),
            48,
            kTVMFFISEqHashKindConstTreeNode,
        )
        .field(
            "kind",
            "",
            0,
            Storage::I32,
            offset_of!(AccessStepObj, kind),
            kTVMFFIInt,
            Schema::INT,
        )
        .field(
            "key",
            "",
            0,
            Storage::Any,
            offset_of!(AccessStepObj, key),
            -1,
            Schema::ANY,
        )
        .creatable::<AccessStepObj>()
        .attr_fn("__ffi_repr__", step_repr().func)
        .final_(true);

    type P<'a> = Obj<'a, AccessPathT>;
    type PathRet = Owned<AccessPathT>;
    let str_key = |s: Str<'_>| {
        crate::runtime::model::string::make_text(s.0, crate::runtime::model::string::TextKind::Str)
    };
    // `_attr`, `_array_item`, ...: the path extended by one step of `kind`.
    macro_rules! step_method {
        ($def:ident, $name:literal, $kind:expr, |$k:ident: $ty:ty| $key:expr) => {
            $def.method(
                $name,
                "",
                0,
                typed_fn!(method_name(PATH, $name), |p: P<'_>, $k: $ty| -> PathRet {
                    Ok(Owned::new(extend_path(&p, new_step($kind, $key))))
                }),
            )
        };
    }
    let mut def = TypeDef::dynamic(t, PATH, kTVMFFIObject, 1, kAccessPath);
    def.metadata(
        Some(create::<AccessPathObj, kAccessPath>),
        48,
        kTVMFFISEqHashKindConstTreeNode,
    )
    .field(
        "parent",
        "",
        0,
        Storage::Object,
        offset_of!(AccessPathObj, parent),
        -1,
        Schema::optional(Schema::OBJECT),
    )
    .field(
        "step",
        "",
        0,
        Storage::Object,
        offset_of!(AccessPathObj, step),
        -1,
        Schema::optional(Schema::object(STEP)),
    )
    .field(
        "depth",
        "",
        0,
        Storage::I32,
        offset_of!(AccessPathObj, depth),
        kTVMFFIInt,
        Schema::INT,
    )
    .method(
        "_root",
        "",
        kTVMFFIFieldFlagBitMaskIsStaticMethod,
        typed_fn!(method_name(PATH, "_root"), || -> PathRet {
            Ok(Owned::new(root_path()))
        }),
    )
    .method(
        "_extend",
        "",
        0,
        typed_fn!(method_name(PATH, "_extend"), |p: P<'_>,
                                                 s: Obj<'_, AccessStepT>|
         -> PathRet {
            Ok(Owned::new(extend_path(&p, (*s).clone())))
        }),
    );
    step_method!(def, "_attr", 0, |name: Str<'_>| str_key(name));
    step_method!(def, "_array_item", 1, |i: i64| Any::from(i));
    step_method!(def, "_map_item", 2, |k: AnyView<'_>| k.to_owned_any()?);
    step_method!(def, "_attr_missing", 3, |name: Str<'_>| str_key(name));
    step_method!(def, "_array_item_missing", 4, |i: i64| Any::from(i));
    step_method!(def, "_map_item_missing", 5, |k: AnyView<'_>| k
        .to_owned_any()?);
    def.method(
        "_is_prefix_of",
        "",
        0,
        typed_fn!(method_name(PATH, "_is_prefix_of"), |p: P<'_>,
                                                       other: P<'_>|
         -> bool {
            is_prefix_of(&p, &other)
        }),
    )
    .method(
        "_to_steps",
        "",
        0,
        typed_fn!(method_name(PATH, "_to_steps"), |p: P<'_>| -> ArrayRet<
            Owned<AccessStepT>,
        > {
            let steps = path_steps(&p).into_iter().map(Any::from).collect();
            Ok(ArrayRet::new(seq::new_array(steps)))
        }),
    )
    .method(
        "_path_equal",
        "",
        0,
        typed_fn!(method_name(PATH, "_path_equal"), |p: P<'_>,
                                                     other: P<'_>|
         -> bool {
            path_equal(&p, &other)
        }),
    )
    .creatable::<AccessPathObj>()
    .attr_fn("__ffi_repr__", path_repr().func)
    .final_(true);
}

/// `fn_repr(value)` as text.
fn repr_with(fn_repr: &Function, value: AnyView<'_>) -> Result<Vec<u8>> {
    let out = fn_repr.call(&[value])?;
    out.view()
        .as_str_bytes()
        .map(<[u8]>::to_vec)
        .ok_or_else(|| Error::type_error("__ffi_repr__: fn_repr did not return a string"))
}

/// The text of one step: `.name`, `[index]`, `[<repr(key)>]`, or the
/// `[<missing:...>]` forms.
fn step_text(step: &AccessStepObj, fn_repr: &Function) -> Result<Vec<u8>> {
    let key = step.key.0.view();
    let int = || key.as_i64().unwrap_or(0).to_string().into_bytes();
    let mut out = Vec::new();
    match step.kind {
        0 => {
            out.push(b'.');
            out.extend_from_slice(key.as_str_bytes().unwrap_or(b""));
        }
        1 => out.extend([b"[".to_vec(), int(), b"]".to_vec()].concat()),
        2 => out.extend([b"[".to_vec(), repr_with(fn_repr, key)?, b"]".to_vec()].concat()),
        4 => out.extend([b"[<missing:".to_vec(), int(), b">]".to_vec()].concat()),
        3 | 5 => out.extend(
            [
                b"[<missing:".to_vec(),
                repr_with(fn_repr, key)?,
                b">]".to_vec(),
            ]
            .concat(),
        ),
        k => return Err(Error::value(format!("AccessStep: unknown kind {k}"))),
    }
    Ok(out)
}

fn step_repr() -> Described {
    typed_fn! {
        "ffi.reflection.AccessStep.__ffi_repr__",
        |s: Obj<'_, AccessStepT>, fn_repr: Obj<'_, FunctionT>| -> StrRet {
            let f = Function::from_object((*fn_repr).clone()).expect("a Function");
            Ok(StrRet(step_text(step_of(&s), &f)?))
        }
    }
}

fn path_repr() -> Described {
    typed_fn! {
        "ffi.reflection.AccessPath.__ffi_repr__",
        |p: Obj<'_, AccessPathT>, fn_repr: Obj<'_, FunctionT>| -> StrRet {
            let f = Function::from_object((*fn_repr).clone()).expect("a Function");
            let mut out = b"<root>".to_vec();
            for step in path_steps(&p) {
                let text = repr_with(&f, Any::from(step).view())?;
                out.extend_from_slice(&text);
            }
            Ok(StrRet(out))
        }
    }
}

/// `ffi.VisitInterrupt(value)`.
pub fn visit_interrupt_global() -> Described {
    typed_fn!(
        "ffi.VisitInterrupt",
        |value: AnyView<'_>| -> Owned<VisitInterruptT> {
            Ok(Owned::new(new_object(
                kTVMFFIVisitInterrupt,
                VisitInterruptObj {
                    value: AnyField(value.to_owned_any()?),
                },
            )))
        }
    )
}
