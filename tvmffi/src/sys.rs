//! The TVM-FFI C ABI as this crate calls it: the `#[repr(C)]` types (sizes
//! and offsets asserted below, the same as `tvm/ffi/c_api.h`) and the C
//! functions, which come from the process's `libtvm_ffi` (an extension) or
//! from the runtime linked into the program (a host, through `tvmffi-host`).
//!
//! Every function here is `unsafe` to call: each contract is the C
//! header's. The safe modules of this crate are the only callers.
//!
//! These mirror the runtime's `abi` module rather than use it: an
//! extension must not depend on the runtime crate. `tests/host.rs` checks
//! that the two agree.

use core::ffi::{c_char, c_int, c_void};
pub use dlpark::ffi::{DLDataType, DLDevice, DLManagedTensorVersioned, DLTensor};

/// An object handle (`TVMFFIObjectHandle`).
pub type Handle = *mut c_void;

/// `TVMFFIByteArray`: a borrowed byte string.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ByteArray {
    /// First byte.
    pub data: *const c_char,
    /// Length in bytes.
    pub size: usize,
}

impl ByteArray {
    /// A view of `s` (valid while `s` is).
    pub fn of(s: &[u8]) -> ByteArray {
        ByteArray {
            data: s.as_ptr().cast(),
            size: s.len(),
        }
    }
    /// The bytes.
    ///
    /// # Safety
    /// `data` points to `size` readable bytes that live for `'a`.
    pub unsafe fn bytes<'a>(&self) -> &'a [u8] {
        if self.size == 0 {
            return &[];
        }
        // SAFETY: the caller's promise.
        unsafe { core::slice::from_raw_parts(self.data.cast(), self.size) }
    }
}

/// `TVMFFIAny`: a tagged 16-byte value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawAny {
    /// Type index.
    pub type_index: i32,
    /// Small string/bytes length, else zero.
    pub small_len: u32,
    /// The 8-byte payload (integer bits, double bits, pointer or inline bytes).
    pub bits: u64,
}

impl RawAny {
    /// `None`.
    pub const NONE: RawAny = RawAny {
        type_index: NONE,
        small_len: 0,
        bits: 0,
    };
}

/// `TVMFFIObject`: the header every object starts with.
#[repr(C)]
pub struct ObjectHeader {
    /// Strong count (low 32 bits) and weak count (high 32 bits).
    pub combined_ref_count: core::sync::atomic::AtomicU64,
    /// Type index.
    pub type_index: i32,
    /// Zero.
    pub padding: u32,
    /// Called with `DELETE_STRONG`, `DELETE_WEAK` or both.
    pub deleter: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
}

/// `TVMFFIErrorCell`, after an error object's header.
#[repr(C)]
pub struct ErrorCell {
    /// Kind (`ValueError`, ...).
    pub kind: ByteArray,
    /// Message.
    pub message: ByteArray,
    /// Backtrace text, innermost frame last.
    pub backtrace: ByteArray,
    /// Replaces or appends to the backtrace.
    pub update_backtrace: Option<unsafe extern "C" fn(Handle, *const ByteArray, i32)>,
    /// The error this one was raised from, or NULL.
    pub cause_chain: Handle,
    /// Extra context object, or NULL.
    pub extra_context: Handle,
}

/// `TVMFFISeqCell`, after an array's header.
#[repr(C)]
pub struct SeqCell {
    /// The elements (`RawAny`).
    pub data: *mut c_void,
    /// Element count.
    pub size: i64,
    /// Capacity.
    pub capacity: i64,
    /// Frees `data`.
    pub data_deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// `TVMFFISafeCallType`.
pub type SafeCall = unsafe extern "C" fn(Handle, *const RawAny, i32, *mut RawAny) -> c_int;
/// `TVMFFIFieldGetter`.
pub type FieldGetter = unsafe extern "C" fn(*mut c_void, *mut RawAny) -> c_int;
/// `TVMFFIFieldSetter`.
pub type FieldSetter = unsafe extern "C" fn(*mut c_void, *const RawAny) -> c_int;
/// `TVMFFIObjectCreator`.
pub type Creator = unsafe extern "C" fn(*mut Handle) -> c_int;

/// `TVMFFIFieldInfo`.
#[repr(C)]
pub struct FieldInfo {
    /// Field name.
    pub name: ByteArray,
    /// Docstring.
    pub doc: ByteArray,
    /// JSON metadata.
    pub metadata: ByteArray,
    /// `FIELD_*` flags.
    pub flags: i64,
    /// Size of the stored value.
    pub size: i64,
    /// Its alignment.
    pub alignment: i64,
    /// Offset from the object's start.
    pub offset: i64,
    /// Reads the field.
    pub getter: Option<FieldGetter>,
    /// Writes the field (a `FieldSetter`).
    pub setter: *mut c_void,
    /// The default (with `FIELD_HAS_DEFAULT`).
    pub default_value: RawAny,
    /// Static type index of the field, `ANY` when not fixed.
    pub field_static_type_index: i32,
}

/// `TVMFFITypeMetadata`.
#[repr(C)]
pub struct TypeMetadata {
    /// Docstring.
    pub doc: ByteArray,
    /// Makes a default-initialised instance.
    pub creator: Option<Creator>,
    /// Size of an instance.
    pub total_size: i32,
    /// `TVMFFISEqHashKind`.
    pub structural_eq_hash_kind: i32,
}

/// `TVMFFITypeInfo` (the leading fields this crate reads).
#[repr(C)]
pub struct TypeInfo {
    /// Type index.
    pub type_index: i32,
    /// Depth in the type tree.
    pub type_depth: i32,
    /// Type key.
    pub type_key: ByteArray,
    /// Ancestors, `type_depth` of them, root first.
    pub type_ancestors: *const *const TypeInfo,
}

/// `kTVMFFIAny`.
pub const ANY: i32 = -1;
/// `kTVMFFINone`.
pub const NONE: i32 = 0;
/// `kTVMFFIInt`.
pub const INT: i32 = 1;
/// `kTVMFFIBool`.
pub const BOOL: i32 = 2;
/// `kTVMFFIFloat`.
pub const FLOAT: i32 = 3;
/// `kTVMFFIDLTensorPtr`.
pub const DLTENSOR_PTR: i32 = 7;
/// `kTVMFFIRawStr`.
pub const RAW_STR: i32 = 8;
/// `kTVMFFIByteArrayPtr`.
pub const BYTE_ARRAY_PTR: i32 = 9;
/// `kTVMFFISmallStr`.
pub const SMALL_STR: i32 = 11;
/// `kTVMFFISmallBytes`.
pub const SMALL_BYTES: i32 = 12;
/// `kTVMFFIStaticObjectBegin`: this index and above hold an object.
pub const OBJECT_BEGIN: i32 = 64;
/// `kTVMFFIObject`.
pub const OBJECT: i32 = 64;
/// `kTVMFFIStr`.
pub const STR: i32 = 65;
/// `kTVMFFIBytes`.
pub const BYTES: i32 = 66;
/// `kTVMFFIFunction`.
pub const FUNCTION: i32 = 68;
/// `kTVMFFITensor`.
pub const TENSOR: i32 = 70;
/// `kTVMFFIArray`.
pub const ARRAY: i32 = 71;
/// `kTVMFFIMap`.
pub const MAP: i32 = 72;
/// `kTVMFFIModule`.
pub const MODULE: i32 = 73;

/// `kTVMFFIObjectDeleterFlagBitMaskStrong`.
pub const DELETE_STRONG: c_int = 1;
/// `kTVMFFIObjectDeleterFlagBitMaskWeak`.
pub const DELETE_WEAK: c_int = 2;
/// `kTVMFFIFieldFlagBitMaskWritable`.
pub const FIELD_WRITABLE: i64 = 1;
/// `kTVMFFIFieldFlagBitMaskHasDefault`.
pub const FIELD_HAS_DEFAULT: i64 = 1 << 1;
/// `kTVMFFISEqHashKindTreeNode`.
pub const SEQ_HASH_TREE_NODE: i32 = 1;

const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<ByteArray>() == 16);
    assert!(size_of::<RawAny>() == 16 && offset_of!(RawAny, bits) == 8);
    assert!(size_of::<ObjectHeader>() == 24 && offset_of!(ObjectHeader, type_index) == 8);
    assert!(offset_of!(ObjectHeader, deleter) == 16);
    assert!(size_of::<ErrorCell>() == 72 && offset_of!(ErrorCell, update_backtrace) == 48);
    assert!(size_of::<SeqCell>() == 32);
    assert!(offset_of!(FieldInfo, flags) == 48 && offset_of!(FieldInfo, offset) == 72);
    assert!(offset_of!(FieldInfo, getter) == 80 && offset_of!(FieldInfo, default_value) == 96);
    assert!(size_of::<FieldInfo>() == 120);
    assert!(size_of::<TypeMetadata>() == 32 && offset_of!(TypeMetadata, total_size) == 24);
    assert!(offset_of!(TypeInfo, type_ancestors) == 24);
};

/// Declares the C functions and a table holding their addresses: the table
/// makes every one a load-time reference, so a process without a TVM-FFI
/// runtime refuses the library at `dlopen` ("undefined symbol: TVMFFI...")
/// instead of failing at its first call under lazy binding.
///
/// On Windows a DLL names the DLL each import comes from: an extension
/// imports them from `tvm_ffi.dll` (no import library needed,
/// `raw-dylib`), which the loader answers with the `tvm_ffi.dll` the
/// process has loaded, ours or the official one.
macro_rules! c_functions {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        #[cfg_attr(windows, link(name = "tvm_ffi", kind = "raw-dylib"))]
        unsafe extern "C" {
            $(
                #[doc = concat!("`", stringify!($name), "` (see `tvm/ffi/c_api.h`).")]
                pub fn $name($($arg: $ty),*) $(-> $ret)?;
            )*
        }
        #[used]
        static BOUND_AT_LOAD: [unsafe extern "C" fn(); [$(stringify!($name)),*].len()] = [
            // SAFETY: only the addresses are stored, never called through
            // this type.
            $(unsafe { core::mem::transmute::<*const (), unsafe extern "C" fn()>($name as *const ()) }),*
        ];
    };
}

c_functions! {
    fn TVMFFIObjectIncRef(obj: Handle) -> c_int;
    fn TVMFFIObjectDecRef(obj: Handle) -> c_int;
    fn TVMFFIFunctionCreate(self_: *mut c_void, safe_call: SafeCall, deleter: Option<unsafe extern "C" fn(*mut c_void)>, out: *mut Handle) -> c_int;
    fn TVMFFIFunctionCall(func: Handle, args: *const RawAny, num_args: i32, result: *mut RawAny) -> c_int;
    fn TVMFFIFunctionGetGlobal(name: *const ByteArray, out: *mut Handle) -> c_int;
    fn TVMFFIFunctionSetGlobal(name: *const ByteArray, f: Handle, allow_override: c_int) -> c_int;
    fn TVMFFIAnyViewToOwnedAny(view: *const RawAny, out: *mut RawAny) -> c_int;
    fn TVMFFIErrorSetRaised(error: Handle);
    fn TVMFFIErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char);
    fn TVMFFIErrorMoveFromRaised(result: *mut Handle);
    fn TVMFFIErrorCreateWithCauseAndExtraContext(kind: *const ByteArray, message: *const ByteArray, backtrace: *const ByteArray, cause: Handle, extra: Handle, out: *mut Handle) -> c_int;
    fn TVMFFIBacktrace(filename: *const c_char, lineno: c_int, func: *const c_char, cross_ffi_boundary: c_int) -> *const ByteArray;
    fn TVMFFIStringFromByteArray(input: *const ByteArray, out: *mut RawAny) -> c_int;
    fn TVMFFIBytesFromByteArray(input: *const ByteArray, out: *mut RawAny) -> c_int;
    fn TVMFFIDataTypeFromString(s: *const ByteArray, out: *mut DLDataType) -> c_int;
    fn TVMFFIDataTypeToString(dtype: *const DLDataType, out: *mut RawAny) -> c_int;
    fn TVMFFITensorFromDLPackVersioned(from: *mut DLManagedTensorVersioned, require_alignment: i32, require_contiguous: i32, out: *mut Handle) -> c_int;
    fn TVMFFITensorToDLPackVersioned(from: Handle, out: *mut *mut DLManagedTensorVersioned) -> c_int;
    fn TVMFFITypeKeyToIndex(type_key: *const ByteArray, out: *mut i32) -> c_int;
    fn TVMFFITypeGetOrAllocIndex(type_key: *const ByteArray, static_type_index: i32, type_depth: i32, num_child_slots: i32, child_slots_can_overflow: i32, parent_type_index: i32) -> i32;
    fn TVMFFIGetTypeInfo(type_index: i32) -> *const TypeInfo;
    fn TVMFFITypeRegisterField(type_index: i32, info: *const FieldInfo) -> c_int;
    fn TVMFFITypeRegisterMetadata(type_index: i32, metadata: *const TypeMetadata) -> c_int;
    fn TVMFFIEnvGetStream(device_type: i32, device_id: i32) -> *mut c_void;
}
