//! Tensor objects `{TVMFFIObject, DLTensor, ...}` and DLPack exchange.
//!
//! Import takes ownership of the producer's managed tensor and calls its
//! deleter exactly once, when the last holder of the Tensor lets go; if the
//! import fails, ownership stays with the caller. Export hands out a managed
//! tensor that keeps the Tensor alive until its deleter runs.

use super::error::{Error, Result};
use super::object::{ObjectRef, new_object};
use crate::abi::*;
use core::ffi::c_void;

/// What keeps a tensor's data alive.
enum Owner {
    /// A DLPack 0.x managed tensor; its deleter runs at drop.
    Managed(*mut DLManagedTensor),
    /// A DLPack 1.x managed tensor; its deleter runs at drop.
    Versioned(*mut DLManagedTensorVersioned),
    /// Another Tensor (views share its data), held only to keep it alive.
    Source(#[allow(dead_code, reason = "held for its Drop")] ObjectRef),
}

/// The payload of our Tensor objects: the DLTensor first (at handle + 24),
/// then storage for shape/strides the tensor owns, then the owner.
#[repr(C)]
struct TensorPayload {
    dl: DLTensor,
    /// Shape (views) and strides (views, or compact strides filled in when
    /// the producer gave none): `dl.shape`/`dl.strides` may point here.
    dims: Box<[i64]>,
    owner: Owner,
}

// SAFETY: the producer's deleter may run on any thread (DLPack contract);
// the payload is immutable after creation.
unsafe impl Send for TensorPayload {}
// SAFETY: see `Send`.
unsafe impl Sync for TensorPayload {}

impl Drop for TensorPayload {
    fn drop(&mut self) {
        // SAFETY: we own the managed tensor; its deleter runs exactly once.
        unsafe {
            match self.owner {
                Owner::Managed(m) => {
                    if let Some(d) = (*m).deleter {
                        d(m)
                    }
                }
                Owner::Versioned(m) => {
                    if let Some(d) = (*m).deleter {
                        d(m)
                    }
                }
                Owner::Source(_) => {}
            }
        }
    }
}

/// The shape of a DLTensor as a slice, after checking `ndim` and `shape`.
///
/// # Safety
/// `shape` points to `ndim` readable values when non-NULL.
unsafe fn checked_shape(t: &DLTensor) -> Result<&[i64]> {
    if t.ndim < 0 {
        return Err(Error::value(format!(
            "DLTensor has a negative ndim ({})",
            t.ndim
        )));
    }
    if t.ndim == 0 {
        return Ok(&[]);
    }
    if t.shape.is_null() {
        return Err(Error::value(format!(
            "DLTensor has ndim {} but a NULL shape",
            t.ndim
        )));
    }
    // SAFETY: per the contract.
    Ok(unsafe { core::slice::from_raw_parts(t.shape, t.ndim as usize) })
}

/// Compact row-major strides of `shape`.
fn compact_strides(shape: &[i64]) -> Box<[i64]> {
    let mut strides = vec![1i64; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1].wrapping_mul(shape[k + 1]);
    }
    strides.into_boxed_slice()
}

/// Whether the tensor is row-major contiguous (size-1 dims ignored; empty
/// tensors and NULL strides count as contiguous), as the reference decides.
fn is_contiguous(t: &DLTensor, shape: &[i64]) -> bool {
    if t.strides.is_null() || shape.contains(&0) {
        return true;
    }
    // SAFETY: non-NULL strides of a valid DLTensor hold `ndim` values.
    let strides = unsafe { core::slice::from_raw_parts(t.strides, shape.len()) };
    let mut expected = 1i64;
    for k in (0..shape.len()).rev() {
        if shape[k] == 1 {
            continue;
        }
        if strides[k] != expected {
            return false;
        }
        expected = expected.wrapping_mul(shape[k]);
    }
    true
}

/// Whether the first element is aligned: the address for host-addressable
/// devices, the byte offset for the others.
fn is_aligned(t: &DLTensor, alignment: u64) -> bool {
    let direct = matches!(
        t.device.device_type,
        1..=3 | kDLCUDAManaged | kDLROCM | kDLROCMHost
    );
    if direct {
        (t.data as u64).wrapping_add(t.byte_offset) % alignment == 0
    } else {
        t.byte_offset % alignment == 0
    }
}

/// Checks an imported tensor; nothing is taken over on failure.
fn check_import(t: &DLTensor, require_alignment: i32, require_contiguous: bool) -> Result<()> {
    // SAFETY: the producer hands us a valid DLTensor.
    let shape = unsafe { checked_shape(t) }?;
    if require_alignment < 0 {
        return Err(Error::value(format!(
            "require_alignment must not be negative, got {require_alignment}"
        )));
    }
    if require_alignment != 0 && !is_aligned(t, require_alignment as u64) {
        return Err(Error::runtime(format!(
            "FromDLPack: Data is not aligned to {require_alignment} bytes."
        )));
    }
    if require_contiguous && !is_contiguous(t, shape) {
        return Err(Error::runtime("FromDLPack: Tensor is not contiguous."));
    }
    Ok(())
}

/// Wraps a checked DLTensor, filling in compact strides when it has none.
fn wrap(mut dl: DLTensor, owner: Owner) -> ObjectRef {
    let mut dims: Box<[i64]> = Box::default();
    if dl.strides.is_null() && dl.ndim > 0 {
        // SAFETY: checked by `check_import` (or by the allocator contract).
        dims = compact_strides(unsafe { core::slice::from_raw_parts(dl.shape, dl.ndim as usize) });
        dl.strides = dims.as_mut_ptr();
    }
    new_object(kTVMFFITensor, TensorPayload { dl, dims, owner })
}

/// `TVMFFITensorFromDLPack`.
///
/// # Safety
/// `from` is a valid managed tensor whose ownership passes to the Tensor on
/// success.
pub unsafe fn from_dlpack(
    from: *mut DLManagedTensor,
    align: i32,
    contiguous: bool,
) -> Result<ObjectRef> {
    // SAFETY: per the contract.
    let dl = unsafe { (*from).dl_tensor };
    check_import(&dl, align, contiguous)?;
    Ok(wrap(dl, Owner::Managed(from)))
}

/// `TVMFFITensorFromDLPackVersioned`; also rejects padded sub-byte types.
///
/// # Safety
/// As for [`from_dlpack`].
pub unsafe fn from_dlpack_versioned(
    from: *mut DLManagedTensorVersioned,
    align: i32,
    contiguous: bool,
) -> Result<ObjectRef> {
    // SAFETY: per the contract.
    let (dl, flags) = unsafe { ((*from).dl_tensor, (*from).flags) };
    check_import(&dl, align, contiguous)?;
    if flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0 {
        return Err(Error::runtime("Subbyte type padded is not yet supported"));
    }
    Ok(wrap(dl, Owner::Versioned(from)))
}

/// The DLTensor of a Tensor object (ours or foreign).
pub fn dl_tensor(obj: &ObjectRef) -> Result<&DLTensor> {
    if obj.type_index() != kTVMFFITensor {
        return Err(Error::type_error(format!(
            "expected an ffi.Tensor, got {}",
            super::type_table::type_key_of(obj.type_index())
        )));
    }
    // SAFETY: every Tensor has its DLTensor right after the header.
    Ok(unsafe {
        &*obj
            .as_ptr()
            .cast::<u8>()
            .add(size_of::<TVMFFIObject>())
            .cast()
    })
}

/// Deleter of exported managed tensors: releases the Tensor, frees the box.
unsafe extern "C" fn release_exported<M: ManagedTensor>(m: *mut M) {
    // SAFETY: `m` came from `Box::into_raw` in `to_dlpack`; its context owns
    // one strong reference to the Tensor.
    let m = unsafe { Box::from_raw(m) };
    // SAFETY: as above.
    drop(unsafe { ObjectRef::from_raw(core::ptr::NonNull::new_unchecked(m.context().cast())) });
}

/// The two DLPack managed tensor structs, as exported.
pub trait ManagedTensor: Sized {
    /// A managed tensor sharing `dl`, holding `context`, released by `deleter`.
    fn new(dl: DLTensor, context: *mut c_void, deleter: unsafe extern "C" fn(*mut Self)) -> Self;
    /// The context pointer.
    fn context(&self) -> *mut c_void;
}

impl ManagedTensor for DLManagedTensor {
    fn new(
        dl_tensor: DLTensor,
        manager_ctx: *mut c_void,
        deleter: unsafe extern "C" fn(*mut Self),
    ) -> Self {
        DLManagedTensor {
            dl_tensor,
            manager_ctx,
            deleter: Some(deleter),
        }
    }
    fn context(&self) -> *mut c_void {
        self.manager_ctx
    }
}

impl ManagedTensor for DLManagedTensorVersioned {
    fn new(
        dl_tensor: DLTensor,
        manager_ctx: *mut c_void,
        deleter: unsafe extern "C" fn(*mut Self),
    ) -> Self {
        DLManagedTensorVersioned {
            version: DLPackVersion {
                major: DLPACK_MAJOR_VERSION,
                minor: DLPACK_MINOR_VERSION,
            },
            manager_ctx,
            deleter: Some(deleter),
            flags: 0,
            dl_tensor,
        }
    }
    fn context(&self) -> *mut c_void {
        self.manager_ctx
    }
}

/// `TVMFFITensorToDLPack[Versioned]`: a managed tensor sharing the data and
/// holding a reference to the Tensor until its deleter runs.
pub fn to_dlpack<M: ManagedTensor>(tensor: &ObjectRef) -> Result<*mut M> {
    let dl = *dl_tensor(tensor)?;
    let context = tensor.clone().into_raw().as_ptr().cast();
    Ok(Box::into_raw(Box::new(M::new(
        dl,
        context,
        release_exported::<M>,
    ))))
}

/// `TVMFFITensorCreateUnsafeView`: a Tensor described by `prototype`
/// (shape and strides copied) over memory of `source`, which it keeps alive.
pub fn create_view(source: &ObjectRef, prototype: &DLTensor) -> Result<ObjectRef> {
    dl_tensor(source)?;
    // SAFETY: the caller passes a valid prototype.
    let shape = unsafe { checked_shape(prototype) }?;
    if prototype.strides.is_null() && prototype.ndim > 0 {
        return Err(Error::value(
            "TVMFFITensorCreateUnsafeView: the prototype needs strides",
        ));
    }
    let n = shape.len();
    let mut dims = Vec::with_capacity(2 * n);
    dims.extend_from_slice(shape);
    if n > 0 {
        // SAFETY: non-NULL strides hold `ndim` values.
        dims.extend_from_slice(unsafe { core::slice::from_raw_parts(prototype.strides, n) });
    }
    let mut dims = dims.into_boxed_slice();
    let mut dl = *prototype;
    (dl.shape, dl.strides) = if n == 0 {
        (core::ptr::null_mut(), core::ptr::null_mut())
    } else {
        // SAFETY: `dims` holds 2n values.
        (dims.as_mut_ptr(), unsafe { dims.as_mut_ptr().add(n) })
    };
    Ok(new_object(
        kTVMFFITensor,
        TensorPayload {
            dl,
            dims,
            owner: Owner::Source(source.clone()),
        },
    ))
}

/// Wraps a tensor made by the environment allocator.
///
/// # Safety
/// `m` is a valid managed tensor the allocator handed over.
pub unsafe fn from_allocator(m: *mut DLManagedTensorVersioned) -> Result<ObjectRef> {
    // SAFETY: per the contract.
    let dl = unsafe { (*m).dl_tensor };
    // SAFETY: the allocator returns a valid DLTensor.
    unsafe { checked_shape(&dl) }?;
    Ok(wrap(dl, Owner::Versioned(m)))
}
