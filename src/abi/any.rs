//! `TVMFFIAny`, its value union and the type-index constants.

use super::dlpack::{DLDataType, DLDevice};
use super::object::TVMFFIObject;
use core::ffi::{c_char, c_void};

/// Type index of a value in a `TVMFFIAny` or of an object.
pub type TVMFFITypeIndex = i32;

/// Any type (only used in type signatures, never stored).
pub const kTVMFFIAny: TVMFFITypeIndex = -1;
/// None/nullptr value.
pub const kTVMFFINone: TVMFFITypeIndex = 0;
/// POD int value.
pub const kTVMFFIInt: TVMFFITypeIndex = 1;
/// POD bool value.
pub const kTVMFFIBool: TVMFFITypeIndex = 2;
/// POD float value.
pub const kTVMFFIFloat: TVMFFITypeIndex = 3;
/// Opaque pointer.
pub const kTVMFFIOpaquePtr: TVMFFITypeIndex = 4;
/// DLDataType.
pub const kTVMFFIDataType: TVMFFITypeIndex = 5;
/// DLDevice.
pub const kTVMFFIDevice: TVMFFITypeIndex = 6;
/// DLTensor* (borrowed).
pub const kTVMFFIDLTensorPtr: TVMFFITypeIndex = 7;
/// const char* (borrowed).
pub const kTVMFFIRawStr: TVMFFITypeIndex = 8;
/// TVMFFIByteArray* (borrowed).
pub const kTVMFFIByteArrayPtr: TVMFFITypeIndex = 9;
/// R-value reference to an object: `v_ptr` is the address of a `TVMFFIObject*`.
pub const kTVMFFIObjectRValueRef: TVMFFITypeIndex = 10;
/// Small string stored in place (`small_str_len` bytes of `v_bytes`).
pub const kTVMFFISmallStr: TVMFFITypeIndex = 11;
/// Small bytes stored in place (`small_str_len` bytes of `v_bytes`).
pub const kTVMFFISmallBytes: TVMFFITypeIndex = 12;
/// Structural-mutation marker: no new value was produced.
pub const kTVMFFIUnchanged: TVMFFITypeIndex = 13;
/// Start of statically defined objects.
pub const kTVMFFIStaticObjectBegin: TVMFFITypeIndex = 64;
/// Object, the root of all reference counted objects.
pub const kTVMFFIObject: TVMFFITypeIndex = 64;
/// String object.
pub const kTVMFFIStr: TVMFFITypeIndex = 65;
/// Bytes object.
pub const kTVMFFIBytes: TVMFFITypeIndex = 66;
/// Error object.
pub const kTVMFFIError: TVMFFITypeIndex = 67;
/// Function object.
pub const kTVMFFIFunction: TVMFFITypeIndex = 68;
/// Shape object.
pub const kTVMFFIShape: TVMFFITypeIndex = 69;
/// Tensor object.
pub const kTVMFFITensor: TVMFFITypeIndex = 70;
/// Array object.
pub const kTVMFFIArray: TVMFFITypeIndex = 71;
/// Map object.
pub const kTVMFFIMap: TVMFFITypeIndex = 72;
/// Runtime dynamic loaded module object.
pub const kTVMFFIModule: TVMFFITypeIndex = 73;
/// Opaque Python object.
pub const kTVMFFIOpaquePyObject: TVMFFITypeIndex = 74;
/// List object.
pub const kTVMFFIList: TVMFFITypeIndex = 75;
/// Dict object.
pub const kTVMFFIDict: TVMFFITypeIndex = 76;
/// Structural visit interrupt object.
pub const kTVMFFIVisitInterrupt: TVMFFITypeIndex = 77;
/// Arbitrary precision integer object.
pub const kTVMFFIBigInt: TVMFFITypeIndex = 78;
/// One past the last statically defined object.
pub const kTVMFFIStaticObjectEnd: TVMFFITypeIndex = 79;
/// Start of type indices that are allocated at runtime.
pub const kTVMFFIDynObjectBegin: TVMFFITypeIndex = 128;

/// The value part of a `TVMFFIAny`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union TVMFFIAnyValue {
    /// Integers.
    pub v_int64: i64,
    /// Floating-point numbers.
    pub v_float64: f64,
    /// Typeless pointers.
    pub v_ptr: *mut c_void,
    /// Raw C string.
    pub v_c_str: *const c_char,
    /// Reference counted objects.
    pub v_obj: *mut TVMFFIObject,
    /// Data type.
    pub v_dtype: DLDataType,
    /// Device.
    pub v_device: DLDevice,
    /// Small string bytes.
    pub v_bytes: [u8; 8],
    /// Unsigned 64-bit view, mainly for hashing.
    pub v_uint64: u64,
}

/// A value of any kind: 4-byte type index, 4-byte padding (or small string
/// length), 8-byte value. In C the padding and the value are anonymous unions
/// (`zero_padding`/`small_str_len`, `v_int64`, ...); the C text is emitted
/// verbatim by the header generator.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TVMFFIAny {
    /// Type index of the value.
    pub type_index: i32,
    /// `small_str_len` for small strings/bytes, `zero_padding` (0) otherwise.
    pub small_str_len: u32,
    /// The value.
    pub value: TVMFFIAnyValue,
}

impl TVMFFIAny {
    /// The None value.
    pub const NONE: TVMFFIAny = TVMFFIAny {
        type_index: kTVMFFINone,
        small_str_len: 0,
        value: TVMFFIAnyValue { v_int64: 0 },
    };
}

impl Default for TVMFFIAny {
    fn default() -> Self {
        Self::NONE
    }
}

impl core::fmt::Debug for TVMFFIAny {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: every bit pattern of the 8-byte union is a valid u64.
        let bits = unsafe { self.value.v_uint64 };
        write!(
            f,
            "TVMFFIAny(type_index={}, bits={bits:#x})",
            self.type_index
        )
    }
}
