//! `TVMFFITensor*`.

use super::args::{arg_handle, arg_out, arg_ref, ffi_call, null_arg};
use crate::abi::*;
use crate::runtime::model::boundary::raise_code;
use crate::runtime::{ObjectRef, value::tensor};
use core::ffi::c_int;

/// A new reference to a borrowed handle argument.
fn borrowed(handle: TVMFFIObjectHandle, name: &str) -> crate::runtime::Result<ObjectRef> {
    // SAFETY: the caller guarantees the handle is NULL (rejected) or live.
    Ok(unsafe { ObjectRef::from_borrowed(arg_handle(handle, name)?) })
}

/// Shared body of the two imports: checks the pointers, then wraps.
///
/// # Safety
/// `from` is NULL or a valid managed tensor; `out` is NULL or writable.
unsafe fn import<M>(
    from: *mut M,
    out: *mut TVMFFIObjectHandle,
    wrap: impl FnOnce(*mut M) -> crate::runtime::Result<ObjectRef>,
) -> c_int {
    // SAFETY: per the contract.
    let made = unsafe { arg_out(out, "out") }.and_then(|out| {
        if from.is_null() {
            return Err(null_arg("from"));
        }
        Ok((out, wrap(from)?))
    });
    // No unwinding guard: checking and wrapping panic nowhere (allocation
    // failure aborts), and the producer's deleter does not run here.
    match made {
        Ok((out, tensor)) => {
            *out = tensor.into_raw_ptr().cast();
            0
        }
        Err(e) => raise_code(e),
    }
}

/// Wraps a DLPack 0.x managed tensor in a Tensor without copying. With
/// `require_alignment` > 0 the first element must be aligned to that many
/// bytes; with `require_contiguous` the tensor must be row-major compact.
/// Ownership: on success the Tensor owns `from` and calls its deleter once,
/// when the last reference goes; on failure the caller still owns it.
/// Errors: RuntimeError "FromDLPack: Data is not aligned to N bytes." /
/// "FromDLPack: Tensor is not contiguous."; ValueError for NULL or
/// malformed input (negative ndim, NULL shape).
///
/// # Safety
/// `from` is NULL or a valid managed tensor; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITensorFromDLPack(
    from: *mut DLManagedTensor,
    require_alignment: i32,
    require_contiguous: i32,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        import(from, out, |m| {
            tensor::from_dlpack(m, require_alignment, require_contiguous != 0)
        })
    }
}

/// Wraps a DLPack 1.x managed tensor in a Tensor without copying; as
/// `TVMFFITensorFromDLPack`, and also rejects
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED` with a RuntimeError.
///
/// # Safety
/// `from` is NULL or a valid managed tensor; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITensorFromDLPackVersioned(
    from: *mut DLManagedTensorVersioned,
    require_alignment: i32,
    require_contiguous: i32,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        import(from, out, |m| {
            tensor::from_dlpack_versioned(m, require_alignment, require_contiguous != 0)
        })
    }
}

/// Shared body of the two exports.
///
/// # Safety
/// `from` is NULL or a live object; `out` is NULL or writable.
unsafe fn export<M: tensor::ManagedTensor>(from: TVMFFIObjectHandle, out: *mut *mut M) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { arg_out(out, "out") }?;
        *out = tensor::to_dlpack(&borrowed(from, "from")?)?;
        Ok(())
    })
}

/// Exports a Tensor as a DLPack 0.x managed tensor sharing its data.
/// Ownership: the caller owns `*out` and must call its deleter once, which
/// releases the reference it holds to the Tensor.
/// Errors: TypeError if `from` is not a Tensor; ValueError for NULLs.
///
/// # Safety
/// `from` is NULL or a live object; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITensorToDLPack(
    from: TVMFFIObjectHandle,
    out: *mut *mut DLManagedTensor,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { export(from, out) }
}

/// Exports a Tensor as a DLPack 1.x managed tensor sharing its data; as
/// `TVMFFITensorToDLPack`.
///
/// # Safety
/// `from` is NULL or a live object; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITensorToDLPackVersioned(
    from: TVMFFIObjectHandle,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { export(from, out) }
}

/// Creates a Tensor described by `prototype` (its data pointer, dtype,
/// device, byte offset; shape and strides copied) that keeps `source` alive.
/// No bounds are checked against `source`: the caller vouches for the view.
/// Ownership: `*out` receives a new reference.
/// Errors: TypeError if `source` is not a Tensor; ValueError for NULLs or a
/// prototype without strides.
///
/// # Safety
/// `source` is NULL or a live object; `prototype` is NULL or a valid
/// DLTensor; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFITensorCreateUnsafeView(
    source: TVMFFIObjectHandle,
    prototype: *const DLTensor,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (proto, out) = unsafe { (arg_ref(prototype, "prototype")?, arg_out(out, "out")?) };
        // SAFETY: a valid prototype per the contract.
        *out = unsafe { tensor::create_view(&borrowed(source, "source")?, proto) }?
            .into_raw()
            .as_ptr()
            .cast();
        Ok(())
    })
}
