//! Reflection tables: type, field and method information, type attributes.

use super::any::TVMFFIAny;
use super::cells::TVMFFIByteArray;
use super::object::TVMFFIObjectHandle;
use core::ffi::{c_int, c_void};

/// Reads a field at `field` into `result`; 0 on success.
pub type TVMFFIFieldGetter =
    Option<unsafe extern "C" fn(field: *mut c_void, result: *mut TVMFFIAny) -> c_int>;
/// Writes `value` into the field at `field`; 0 on success.
pub type TVMFFIFieldSetter =
    Option<unsafe extern "C" fn(field: *mut c_void, value: *const TVMFFIAny) -> c_int>;
/// Creates a default-initialised object; 0 on success.
pub type TVMFFIObjectCreator =
    Option<unsafe extern "C" fn(result: *mut TVMFFIObjectHandle) -> c_int>;

/// Flags of a field or method.
pub type TVMFFIFieldFlagBitMask = i32;
/// The field is writable.
pub const kTVMFFIFieldFlagBitMaskWritable: TVMFFIFieldFlagBitMask = 1 << 0;
/// The field has a default value.
pub const kTVMFFIFieldFlagBitMaskHasDefault: TVMFFIFieldFlagBitMask = 1 << 1;
/// The method is a static method.
pub const kTVMFFIFieldFlagBitMaskIsStaticMethod: TVMFFIFieldFlagBitMask = 1 << 2;
/// The field is ignored by structural equality and hashing.
pub const kTVMFFIFieldFlagBitMaskSEqHashIgnore: TVMFFIFieldFlagBitMask = 1 << 3;
/// The field defines variables in pattern mode for structural equality.
pub const kTVMFFIFieldFlagBitMaskSEqHashDefPattern: TVMFFIFieldFlagBitMask = 1 << 4;
/// The default value is a factory function to call.
pub const kTVMFFIFieldFlagBitMaskDefaultFromFactory: TVMFFIFieldFlagBitMask = 1 << 5;
/// The field is left out of repr.
pub const kTVMFFIFieldFlagBitMaskReprOff: TVMFFIFieldFlagBitMask = 1 << 6;
/// The field is left out of comparisons.
pub const kTVMFFIFieldFlagBitMaskCompareOff: TVMFFIFieldFlagBitMask = 1 << 7;
/// The field is left out of hashing.
pub const kTVMFFIFieldFlagBitMaskHashOff: TVMFFIFieldFlagBitMask = 1 << 8;
/// The field is not an `__init__` parameter.
pub const kTVMFFIFieldFlagBitMaskInitOff: TVMFFIFieldFlagBitMask = 1 << 9;
/// The field is keyword-only in `__init__`.
pub const kTVMFFIFieldFlagBitMaskKwOnly: TVMFFIFieldFlagBitMask = 1 << 10;
/// `setter` is a Function object rather than a C function pointer.
pub const kTVMFFIFieldFlagBitSetterIsFunctionObj: TVMFFIFieldFlagBitMask = 1 << 11;
/// The field defines variables in simple mode for structural equality.
pub const kTVMFFIFieldFlagBitMaskSEqHashDefSimple: TVMFFIFieldFlagBitMask = 1 << 12;

/// How a type takes part in structural equality and hashing.
pub type TVMFFISEqHashKind = i32;
/// Structural equality/hash not supported.
pub const kTVMFFISEqHashKindUnsupported: TVMFFISEqHashKind = 0;
/// A tree node compared by its fields.
pub const kTVMFFISEqHashKindTreeNode: TVMFFISEqHashKind = 1;
/// A free variable.
pub const kTVMFFISEqHashKindFreeVar: TVMFFISEqHashKind = 2;
/// A DAG node (sharing is significant).
pub const kTVMFFISEqHashKindDAGNode: TVMFFISEqHashKind = 3;
/// A constant tree node.
pub const kTVMFFISEqHashKindConstTreeNode: TVMFFISEqHashKind = 4;
/// A unique instance compared by address.
pub const kTVMFFISEqHashKindUniqueInstance: TVMFFISEqHashKind = 5;

/// Definition region kinds for structural equality.
pub type TVMFFIDefRegionKind = i32;
/// Not a definition region.
pub const kTVMFFIDefRegionKindNone: TVMFFIDefRegionKind = 0;
/// Pattern definition region.
pub const kTVMFFIDefRegionKindPattern: TVMFFIDefRegionKind = 1;
/// Simple definition region.
pub const kTVMFFIDefRegionKindSimple: TVMFFIDefRegionKind = 2;

/// Reflection information of one field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIFieldInfo {
    /// The name of the field.
    pub name: TVMFFIByteArray,
    /// The docstring of the field.
    pub doc: TVMFFIByteArray,
    /// Structured metadata of the field in JSON.
    pub metadata: TVMFFIByteArray,
    /// `TVMFFIFieldFlagBitMask` flags.
    pub flags: i64,
    /// The size of the field.
    pub size: i64,
    /// The alignment of the field.
    pub alignment: i64,
    /// The offset of the field from the object handle.
    pub offset: i64,
    /// The getter of the field.
    pub getter: TVMFFIFieldGetter,
    /// The setter: a `TVMFFIFieldSetter`, or a Function handle when
    /// `kTVMFFIFieldFlagBitSetterIsFunctionObj` is set.
    pub setter: *mut c_void,
    /// Default value, or factory when `kTVMFFIFieldFlagBitMaskDefaultFromFactory`.
    pub default_value_or_factory: TVMFFIAny,
    /// Static type index of the field, `kTVMFFIAny` if unknown.
    pub field_static_type_index: i32,
}

/// Reflection information of one method.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIMethodInfo {
    /// The name of the method.
    pub name: TVMFFIByteArray,
    /// The docstring of the method.
    pub doc: TVMFFIByteArray,
    /// Structured metadata of the method in JSON.
    pub metadata: TVMFFIByteArray,
    /// `TVMFFIFieldFlagBitMask` flags.
    pub flags: i64,
    /// The method, a Function.
    pub method: TVMFFIAny,
}

/// Extra information of a type.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFITypeMetadata {
    /// The docstring of the type.
    pub doc: TVMFFIByteArray,
    /// Creates a default object of the type, may be NULL.
    pub creator: TVMFFIObjectCreator,
    /// Total size of the object in bytes.
    pub total_size: i32,
    /// `TVMFFISEqHashKind` of the type.
    pub structural_eq_hash_kind: TVMFFISEqHashKind,
}

/// A column of a type attribute, indexed by `type_index - begin_index`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFITypeAttrColumn {
    /// The data of the column.
    pub data: *const TVMFFIAny,
    /// The number of entries in `data`.
    pub size: i32,
    /// The type index of `data[0]`.
    pub begin_index: i32,
}

/// Runtime information of a type.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFITypeInfo {
    /// The type index.
    pub type_index: i32,
    /// Number of ancestors in the type hierarchy.
    pub type_depth: i32,
    /// The unique type key.
    pub type_key: TVMFFIByteArray,
    /// `type_depth` ancestors, root first.
    pub type_ancestors: *const *const TVMFFITypeInfo,
    /// Hash of the type key (as libstdc++'s `std::hash<std::string_view>`).
    pub type_key_hash: u64,
    /// Number of reflected fields.
    pub num_fields: i32,
    /// Number of reflected methods.
    pub num_methods: i32,
    /// The reflected fields.
    pub fields: *const TVMFFIFieldInfo,
    /// The reflected methods.
    pub methods: *const TVMFFIMethodInfo,
    /// Extra information, NULL if none was registered.
    pub metadata: *const TVMFFITypeMetadata,
}
