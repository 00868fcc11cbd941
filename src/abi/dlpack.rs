//! DLPack 1.x types, laid out as `dlpack/dlpack.h` declares them.
//!
//! The generated `include/dlpack/dlpack.h` uses DLPack's own include guard,
//! so a program that includes the official `dlpack/dlpack.h` first gets the
//! same declarations and no clash.

#![allow(non_snake_case, reason = "DLPack C parameter names")]

use core::ffi::{c_char, c_int, c_void};

/// The DLPack major version these declarations follow.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version these declarations follow.
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// The tensor is read only.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// The tensor was copied by the producer.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// Sub-byte types are padded to whole bytes.
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// A DLPack version.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DLPackVersion {
    /// DLPack major version.
    pub major: u32,
    /// DLPack minor version.
    pub minor: u32,
}

/// The kind of a device.
pub type DLDeviceType = i32;
/// CPU device.
pub const kDLCPU: DLDeviceType = 1;
/// CUDA GPU device.
pub const kDLCUDA: DLDeviceType = 2;
/// Pinned CUDA CPU memory.
pub const kDLCUDAHost: DLDeviceType = 3;
/// OpenCL devices.
pub const kDLOpenCL: DLDeviceType = 4;
/// Vulkan buffers.
pub const kDLVulkan: DLDeviceType = 7;
/// Metal for Apple GPUs.
pub const kDLMetal: DLDeviceType = 8;
/// Verilog simulator buffers.
pub const kDLVPI: DLDeviceType = 9;
/// ROCm GPUs.
pub const kDLROCM: DLDeviceType = 10;
/// Pinned ROCm CPU memory.
pub const kDLROCMHost: DLDeviceType = 11;
/// Reserved extension device type.
pub const kDLExtDev: DLDeviceType = 12;
/// CUDA managed/unified memory.
pub const kDLCUDAManaged: DLDeviceType = 13;
/// Unified shared memory of oneAPI.
pub const kDLOneAPI: DLDeviceType = 14;
/// WebGPU devices.
pub const kDLWebGPU: DLDeviceType = 15;
/// Qualcomm Hexagon DSP.
pub const kDLHexagon: DLDeviceType = 16;
/// Microsoft MAIA devices.
pub const kDLMAIA: DLDeviceType = 17;
/// AWS Trainium.
pub const kDLTrn: DLDeviceType = 18;

/// A device: its type and id.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DLDevice {
    /// The device type.
    pub device_type: DLDeviceType,
    /// The device index.
    pub device_id: i32,
}

/// Type code of a `DLDataType`.
pub type DLDataTypeCode = u32;
/// Signed integer.
pub const kDLInt: DLDataTypeCode = 0;
/// Unsigned integer.
pub const kDLUInt: DLDataTypeCode = 1;
/// IEEE floating point.
pub const kDLFloat: DLDataTypeCode = 2;
/// Opaque handle.
pub const kDLOpaqueHandle: DLDataTypeCode = 3;
/// bfloat16.
pub const kDLBfloat: DLDataTypeCode = 4;
/// Complex number (real and imaginary parts).
pub const kDLComplex: DLDataTypeCode = 5;
/// Boolean.
pub const kDLBool: DLDataTypeCode = 6;
/// FP8 e3m4.
pub const kDLFloat8_e3m4: DLDataTypeCode = 7;
/// FP8 e4m3.
pub const kDLFloat8_e4m3: DLDataTypeCode = 8;
/// FP8 e4m3b11fnuz.
pub const kDLFloat8_e4m3b11fnuz: DLDataTypeCode = 9;
/// FP8 e4m3fn.
pub const kDLFloat8_e4m3fn: DLDataTypeCode = 10;
/// FP8 e4m3fnuz.
pub const kDLFloat8_e4m3fnuz: DLDataTypeCode = 11;
/// FP8 e5m2.
pub const kDLFloat8_e5m2: DLDataTypeCode = 12;
/// FP8 e5m2fnuz.
pub const kDLFloat8_e5m2fnuz: DLDataTypeCode = 13;
/// FP8 e8m0fnu.
pub const kDLFloat8_e8m0fnu: DLDataTypeCode = 14;
/// FP6 e2m3fn.
pub const kDLFloat6_e2m3fn: DLDataTypeCode = 15;
/// FP6 e3m2fn.
pub const kDLFloat6_e3m2fn: DLDataTypeCode = 16;
/// FP4 e2m1fn.
pub const kDLFloat4_e2m1fn: DLDataTypeCode = 17;

/// The data type of tensor elements.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// A `DLDataTypeCode`.
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Number of lanes (vector types).
    pub lanes: u16,
}

/// A plain, unmanaged tensor description.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    /// The data pointer.
    pub data: *mut c_void,
    /// The device of the tensor.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// The data type.
    pub dtype: DLDataType,
    /// The shape, `ndim` entries.
    pub shape: *mut i64,
    /// Strides in elements, `ndim` entries, or NULL for compact row-major.
    pub strides: *mut i64,
    /// Offset in bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// A DLPack 0.x managed tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor being managed.
    pub dl_tensor: DLTensor,
    /// Context of the producing framework.
    pub manager_ctx: *mut c_void,
    /// Releases the tensor; called once by the consumer.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// A DLPack 1.x versioned managed tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The DLPack version of the producer.
    pub version: DLPackVersion,
    /// Context of the producing framework.
    pub manager_ctx: *mut c_void,
    /// Releases the tensor; called once by the consumer.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` flags.
    pub flags: u64,
    /// The tensor being managed.
    pub dl_tensor: DLTensor,
}

/// Allocates a managed tensor like `prototype`; reports errors via `SetError`.
pub type DLPackManagedTensorAllocator = Option<
    unsafe extern "C" fn(
        prototype: *mut DLTensor,
        out: *mut *mut DLManagedTensorVersioned,
        error_ctx: *mut c_void,
        SetError: Option<
            unsafe extern "C" fn(
                error_ctx: *mut c_void,
                kind: *const c_char,
                message: *const c_char,
            ),
        >,
    ) -> c_int,
>;
