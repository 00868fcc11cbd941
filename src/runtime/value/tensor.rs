//! Tensor objects `{TVMFFIObject, DLTensor, ...}` and DLPack exchange.
//!
//! Import takes ownership of the producer's managed tensor and calls its
//! deleter exactly once, when the last holder of the Tensor lets go; if the
//! import fails, ownership stays with the caller. Export hands out a managed
//! tensor that keeps the Tensor alive until its deleter runs.

use crate::abi::*;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use core::ffi::c_void;

/// What keeps a tensor's data alive; released when the Tensor dies.
enum Owner {
    /// A DLPack 0.x managed tensor; its deleter runs at drop.
    Managed(*mut DLManagedTensor),
    /// A DLPack 1.x managed tensor; its deleter runs at drop.
    Versioned(*mut DLManagedTensorVersioned),
    /// The object whose memory the data lies in (a Tensor for views, the
    /// bytes of a constants artifact), held only to keep it alive.
    Source(#[allow(dead_code, reason = "held for its Drop")] ObjectRef),
}

impl Drop for Owner {
    fn drop(&mut self) {
        // SAFETY: we own the managed tensor; its deleter runs exactly once.
        unsafe {
            match *self {
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

/// Our Tensor objects, from one `malloc`: the header, the DLTensor (at
/// handle + 24, as C and C++ readers expect), the owner, then any shape and
/// strides the tensor owns as trailing int64s.
#[repr(C)]
struct TensorObj {
    header: TVMFFIObject,
    dl: DLTensor,
    owner: Owner,
}

unsafe extern "C" fn delete_tensor(this: *mut c_void, flags: core::ffi::c_int) {
    let obj = this.cast::<TensorObj>();
    let release_owner = || {
        // A panic in a producer's deleter must not unwind into C.
        crate::platform::panic::contain_panic(|| {
            // SAFETY: called once when the strong count reaches zero.
            unsafe { core::ptr::drop_in_place(&raw mut (*obj).owner) }
        });
    };
    // SAFETY (`free_in_place`): the object came from `alloc_in_place` in
    // `new_tensor`, and is freed once, on the weak release.
    match flags {
        kTVMFFIObjectDeleterFlagBitMaskBoth => {
            release_owner();
            // SAFETY: see above.
            unsafe { crate::runtime::model::object::free_in_place(this) };
        }
        kTVMFFIObjectDeleterFlagBitMaskStrong => release_owner(),
        // SAFETY: see above.
        kTVMFFIObjectDeleterFlagBitMaskWeak => unsafe {
            crate::runtime::model::object::free_in_place(this)
        },
        _ => {}
    }
}

/// Allocates a Tensor over a copy of `dl` with `extra` trailing int64s;
/// `init` may point the copy's shape/strides into them.
fn new_tensor(
    dl: &DLTensor,
    owner: Owner,
    extra: usize,
    init: impl FnOnce(&mut DLTensor, *mut i64),
) -> ObjectRef {
    let size = extra
        .checked_mul(size_of::<i64>())
        .and_then(|n| n.checked_add(size_of::<TensorObj>()));
    let obj = crate::runtime::model::object::alloc_in_place(size, false).cast::<TensorObj>();
    // SAFETY: the allocation holds the object and `extra` int64s after it;
    // it is complete, with one reference, once `init` returns.
    unsafe {
        let mem = obj.as_ptr();
        mem.write(TensorObj {
            header: TVMFFIObject {
                combined_ref_count: core::sync::atomic::AtomicU64::new(
                    crate::runtime::model::object::INITIAL_REF_COUNT,
                ),
                type_index: kTVMFFITensor,
                __padding: 0,
                deleter: Some(delete_tensor),
            },
            dl: *dl,
            owner,
        });
        init(&mut (*mem).dl, mem.add(1).cast::<i64>());
        ObjectRef::from_raw(obj.cast())
    }
}

/// The most dimensions an imported tensor may have. Producers stay far
/// below it (NumPy: 64); a larger `ndim` is a corrupt or hostile tensor
/// whose shape array would be read, and copied, far past its end.
pub const MAX_NDIM: i32 = 1024;

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
    if t.ndim > MAX_NDIM {
        return Err(Error::value(format!(
            "DLTensor has ndim {}, more than {MAX_NDIM}",
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

/// Writes compact row-major strides of `shape` to `out`. A plain loop:
/// tensors have few dimensions, so unrolling only adds set-up.
fn fill_compact_strides(shape: &[i64], out: &mut [i64]) {
    let mut stride = 1i64;
    for (out, &dim) in out.iter_mut().zip(shape).rev() {
        *out = stride;
        stride = stride.wrapping_mul(dim);
        // Keeps the optimiser from unrolling the loop.
        core::hint::black_box(());
    }
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
        (t.data as u64)
            .wrapping_add(t.byte_offset)
            .is_multiple_of(alignment)
    } else {
        t.byte_offset.is_multiple_of(alignment)
    }
}

/// Checks an imported tensor; nothing is taken over on failure. The common
/// import (a well-formed shape, nothing required) is decided inline.
#[inline(always)]
fn check_import(t: &DLTensor, require_alignment: i32, require_contiguous: bool) -> Result<()> {
    let well_formed = t.ndim == 0 || (t.ndim > 0 && t.ndim <= MAX_NDIM && !t.shape.is_null());
    if well_formed && require_alignment == 0 && !require_contiguous {
        return Ok(());
    }
    check_import_fully(t, require_alignment, require_contiguous)
}

/// [`check_import`] of a tensor with requirements (or a malformed one).
#[inline(never)]
fn check_import_fully(
    t: &DLTensor,
    require_alignment: i32,
    require_contiguous: bool,
) -> Result<()> {
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

/// The number of bytes of a compact tensor of `dtype` and `shape`, or None
/// on a negative dimension or overflow.
pub fn compact_byte_size(dtype: DLDataType, shape: &[i64]) -> Option<u64> {
    let elems = shape.iter().try_fold(1u64, |n, &d| {
        u64::try_from(d).ok().and_then(|d| n.checked_mul(d))
    })?;
    let bits = elems
        .checked_mul(u64::from(dtype.bits))?
        .checked_mul(u64::from(dtype.lanes))?;
    Some(bits.div_ceil(8))
}

/// The dimensions of a Tensor object.
pub fn shape(obj: &ObjectRef) -> Result<&[i64]> {
    // SAFETY: a Tensor object's shape holds `ndim` values, alive with it.
    unsafe { checked_shape(dl_tensor(obj)?) }
}

/// The element bytes of a row-major contiguous CPU Tensor, borrowed from
/// it; a ValueError for other devices, strided layouts or bad sizes.
pub fn compact_cpu_bytes(obj: &ObjectRef) -> Result<&[u8]> {
    let t = dl_tensor(obj)?;
    if t.device.device_type != kDLCPU {
        return Err(Error::value(format!(
            "the tensor lives on device type {}, not the CPU",
            t.device.device_type
        )));
    }
    // SAFETY: a Tensor object's shape holds `ndim` values.
    let shape = unsafe { checked_shape(t) }?;
    if !is_contiguous(t, shape) {
        return Err(Error::value("the tensor is not contiguous"));
    }
    // A slice spans at most isize::MAX bytes.
    let size = compact_byte_size(t.dtype, shape)
        .and_then(|n| isize::try_from(n).ok())
        .ok_or_else(|| Error::value("the tensor's byte size overflows"))? as usize;
    if size == 0 {
        return Ok(&[]);
    }
    if t.data.is_null() {
        return Err(Error::value("the tensor has NULL data"));
    }
    // The first and last byte must be addresses: a byte offset (or size)
    // that wraps the address space is a hostile or corrupt tensor, whose
    // "data" would be read anywhere.
    let start = usize::try_from(t.byte_offset)
        .ok()
        .and_then(|offset| (t.data as usize).checked_add(offset));
    let spans = start
        .and_then(|start| start.checked_add(size))
        .is_some_and(|end| end <= isize::MAX as usize);
    let Some(start) = start.filter(|_| spans) else {
        return Err(Error::value(format!(
            "the tensor's data at {:p} with byte offset {} and {size} bytes wraps the address space",
            t.data, t.byte_offset
        )));
    };
    // SAFETY: a CPU Tensor's data (after its byte offset) holds its compact
    // elements, alive as long as the object; the span was checked not to
    // wrap.
    Ok(unsafe { core::slice::from_raw_parts(start as *const u8, size) })
}

/// A compact CPU Tensor of `dtype` and `shape` over `data`, which `owner`
/// keeps alive: nothing is copied.
///
/// # Safety
/// `data` points to [`compact_byte_size`] bytes that stay valid while
/// `owner` lives; whoever writes through the tensor may.
pub unsafe fn cpu_tensor_over(
    owner: ObjectRef,
    data: *mut c_void,
    dtype: DLDataType,
    shape: &[i64],
) -> ObjectRef {
    let n = shape.len();
    let dl = DLTensor {
        data,
        device: DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        },
        ndim: n as i32,
        dtype,
        shape: core::ptr::null_mut(),
        strides: core::ptr::null_mut(),
        byte_offset: 0,
    };
    new_tensor(&dl, Owner::Source(owner), 2 * n, |dl, extra| {
        if n == 0 {
            return;
        }
        // SAFETY: `extra` holds 2n int64s: the shape, then the strides.
        unsafe {
            let (dims, strides) = (
                core::slice::from_raw_parts_mut(extra, n),
                core::slice::from_raw_parts_mut(extra.add(n), n),
            );
            dims.copy_from_slice(shape);
            fill_compact_strides(shape, strides);
            dl.shape = extra;
            dl.strides = extra.add(n);
        }
    })
}

/// Wraps a checked DLTensor, filling in compact strides when it has none.
/// Inlined into the imports, which are hot: one frame, no argument moves.
#[inline(always)]
fn wrap(dl: &DLTensor, owner: Owner) -> ObjectRef {
    if !dl.strides.is_null() || dl.ndim <= 0 {
        return new_tensor(dl, owner, 0, |_, _| {});
    }
    let n = dl.ndim as usize;
    new_tensor(dl, owner, n, |dl, extra| {
        // SAFETY: `shape` was checked (or vouched for by the allocator);
        // `extra` holds `n` int64s.
        unsafe {
            let shape = core::slice::from_raw_parts(dl.shape, n);
            fill_compact_strides(shape, core::slice::from_raw_parts_mut(extra, n));
        }
        dl.strides = extra;
    })
}

/// `TVMFFITensorFromDLPack`.
///
/// # Safety
/// `from` is a valid managed tensor whose ownership passes to the Tensor on
/// success.
#[inline]
pub unsafe fn from_dlpack(
    from: *mut DLManagedTensor,
    align: i32,
    contiguous: bool,
) -> Result<ObjectRef> {
    // SAFETY: per the contract.
    let dl = unsafe { &(*from).dl_tensor };
    check_import(dl, align, contiguous)?;
    Ok(wrap(dl, Owner::Managed(from)))
}

/// `TVMFFITensorFromDLPackVersioned`; also rejects padded sub-byte types.
///
/// # Safety
/// As for [`from_dlpack`].
#[inline]
pub unsafe fn from_dlpack_versioned(
    from: *mut DLManagedTensorVersioned,
    align: i32,
    contiguous: bool,
) -> Result<ObjectRef> {
    // SAFETY: per the contract.
    let (dl, flags) = unsafe { (&(*from).dl_tensor, (*from).flags) };
    check_import(dl, align, contiguous)?;
    if flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0 {
        return Err(Error::runtime("Subbyte type padded is not yet supported"));
    }
    Ok(wrap(dl, Owner::Versioned(from)))
}

/// The DLTensor of a Tensor object (ours or foreign).
pub fn dl_tensor(obj: &ObjectRef) -> Result<&DLTensor> {
    obj.cell::<DLTensor>().ok_or_else(|| {
        Error::type_error(format!(
            "expected an ffi.Tensor, got {}",
            crate::runtime::model::type_table::type_key_of(obj.type_index())
        ))
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

/// Whether the tensor's data must not be written: it was imported from a
/// DLPack 1.x tensor flagged read-only, or is a view of such a tensor.
/// Tensors made elsewhere (C++ code, another runtime) answer false.
fn read_only(tensor: &ObjectRef) -> bool {
    // SAFETY: the object is live; its header is readable.
    let deleter = unsafe { (*tensor.as_ptr()).deleter };
    let ours: unsafe extern "C" fn(*mut c_void, core::ffi::c_int) = delete_tensor;
    if !deleter.is_some_and(|d| core::ptr::fn_addr_eq(d, ours)) {
        return false;
    }
    // SAFETY: only `TensorObj`s carry this deleter; the owner is set until
    // the last strong reference goes, and the caller holds one.
    match unsafe { &(*tensor.as_ptr().cast::<TensorObj>()).owner } {
        // SAFETY: an owned managed tensor stays valid until the owner drops.
        Owner::Versioned(m) => (unsafe { (**m).flags } & DLPACK_FLAG_BITMASK_READ_ONLY) != 0,
        Owner::Source(source) => source.type_index() == kTVMFFITensor && read_only(source),
        Owner::Managed(_) => false,
    }
}

/// The two DLPack managed tensor structs, as exported.
pub trait ManagedTensor: Sized {
    /// A managed tensor sharing `dl`, holding `context`, released by
    /// `deleter`; flagged read-only where the format can say so.
    fn new(
        dl: DLTensor,
        context: *mut c_void,
        deleter: unsafe extern "C" fn(*mut Self),
        read_only: bool,
    ) -> Self;
    /// The context pointer.
    fn context(&self) -> *mut c_void;
}

impl ManagedTensor for DLManagedTensor {
    fn new(
        dl_tensor: DLTensor,
        manager_ctx: *mut c_void,
        deleter: unsafe extern "C" fn(*mut Self),
        _read_only: bool,
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
        read_only: bool,
    ) -> Self {
        DLManagedTensorVersioned {
            version: DLPackVersion {
                major: DLPACK_MAJOR_VERSION,
                minor: DLPACK_MINOR_VERSION,
            },
            manager_ctx,
            deleter: Some(deleter),
            flags: if read_only {
                DLPACK_FLAG_BITMASK_READ_ONLY
            } else {
                0
            },
            dl_tensor,
        }
    }
    fn context(&self) -> *mut c_void {
        self.manager_ctx
    }
}

/// `TVMFFITensorToDLPack[Versioned]`: a managed tensor sharing the data and
/// holding a reference to the Tensor until its deleter runs. A DLPack 1.x
/// export keeps the read-only flag its import had (the reference drops it).
pub fn to_dlpack<M: ManagedTensor>(tensor: &ObjectRef) -> Result<*mut M> {
    let dl = *dl_tensor(tensor)?;
    let context = tensor.clone().into_raw().as_ptr().cast();
    Ok(Box::into_raw(Box::new(M::new(
        dl,
        context,
        release_exported::<M>,
        read_only(tensor),
    ))))
}

/// `TVMFFITensorCreateUnsafeView`: a Tensor described by `prototype`
/// (shape and strides copied) over memory of `source`, which it keeps alive.
///
/// # Safety
/// `prototype.shape` holds `ndim` values, and `prototype.strides` is NULL
/// or holds `ndim` values, readable for the call.
pub unsafe fn create_view(source: &ObjectRef, prototype: &DLTensor) -> Result<ObjectRef> {
    dl_tensor(source)?;
    // SAFETY: the caller passes a valid prototype.
    let shape = unsafe { checked_shape(prototype) }?;
    if prototype.strides.is_null() && prototype.ndim > 0 {
        return Err(Error::value(
            "TVMFFITensorCreateUnsafeView: the prototype needs strides",
        ));
    }
    let n = shape.len();
    if n == 0 {
        return Ok(new_tensor(
            prototype,
            Owner::Source(source.clone()),
            0,
            |dl, _| {
                dl.shape = core::ptr::null_mut();
                dl.strides = core::ptr::null_mut();
            },
        ));
    }
    // SAFETY: non-NULL strides hold `ndim` values.
    let strides = unsafe { core::slice::from_raw_parts(prototype.strides, n) };
    Ok(new_tensor(
        prototype,
        Owner::Source(source.clone()),
        2 * n,
        |dl, extra| {
            // SAFETY: `extra` holds 2n int64s: the shape, then the strides.
            unsafe {
                core::ptr::copy_nonoverlapping(shape.as_ptr(), extra, n);
                core::ptr::copy_nonoverlapping(strides.as_ptr(), extra.add(n), n);
                dl.shape = extra;
                dl.strides = extra.add(n);
            }
        },
    ))
}

/// Wraps a tensor made by the environment allocator.
///
/// # Safety
/// `m` is a valid managed tensor the allocator handed over.
pub unsafe fn from_allocator(m: *mut DLManagedTensorVersioned) -> Result<ObjectRef> {
    // SAFETY: per the contract.
    let dl = unsafe { &(*m).dl_tensor };
    // SAFETY: the allocator returns a valid DLTensor.
    unsafe { checked_shape(dl) }?;
    Ok(wrap(dl, Owner::Versioned(m)))
}

/// Takes a dlpark (DLPack 1.x) managed tensor into a Tensor without copying:
/// the tensor owns it and runs its deleter when the last holder lets go. On
/// failure the managed tensor is released.
pub fn from_dlpark(tensor: dlpark::versioned::Dlpack) -> Result<ObjectRef> {
    let raw = tensor.into_raw().cast::<DLManagedTensorVersioned>();
    // SAFETY: dlpark's DLManagedTensorVersioned has our layout (asserted in
    // `abi::layout`); ownership moved out of the dlpark handle.
    unsafe { from_dlpack_versioned(raw, 0, false) }.inspect_err(|_| {
        // SAFETY: the import failed, so the tensor is still ours to release.
        drop(unsafe { dlpark::versioned::Dlpack::from_raw(raw.cast()) });
    })
}

/// Exports a Tensor as a dlpark (DLPack 1.x) managed tensor sharing its data;
/// dropping it releases the Tensor.
pub fn to_dlpark(tensor: &ObjectRef) -> Result<dlpark::versioned::Dlpack> {
    let raw = to_dlpack::<DLManagedTensorVersioned>(tensor)?;
    // SAFETY: a fresh managed tensor of our making, same layout as dlpark's.
    unsafe { dlpark::versioned::Dlpack::from_raw(raw.cast()) }
        .map_err(|e| Error::runtime(format!("dlpark rejected the tensor: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RELEASED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn release(m: *mut DLManagedTensorVersioned) {
        RELEASED.fetch_add(1, Ordering::SeqCst);
        // SAFETY: made by `Box::into_raw` in `managed`.
        drop(unsafe { Box::from_raw(m) });
    }

    fn managed(shape: &mut [i64], data: *mut core::ffi::c_void) -> *mut DLManagedTensorVersioned {
        Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(release),
            flags: 0,
            dl_tensor: DLTensor {
                data,
                device: DLDevice {
                    device_type: 1,
                    device_id: 0,
                },
                ndim: shape.len() as i32,
                dtype: DLDataType {
                    code: 2,
                    bits: 32,
                    lanes: 1,
                },
                shape: shape.as_mut_ptr(),
                strides: core::ptr::null_mut(),
                byte_offset: 0,
            },
        }))
    }

    #[test]
    fn import_fills_strides_and_releases_once_and_refuses_hostile_shapes() {
        let mut data = [0f32; 6];
        let mut shape = [2i64, 3];
        let m = managed(&mut shape, data.as_mut_ptr().cast());
        let before = RELEASED.load(Ordering::SeqCst);
        // SAFETY: a valid managed tensor.
        let t = unsafe { from_dlpack_versioned(m, 4, true) }.unwrap();
        let dl = dl_tensor(&t).unwrap();
        assert_eq!(
            // SAFETY: an imported tensor has `ndim` strides.
            unsafe { core::slice::from_raw_parts(dl.strides, 2) },
            [3, 1]
        );
        drop(t);
        assert_eq!(RELEASED.load(Ordering::SeqCst), before + 1);

        let mut hostile = [2i64, 3];
        let m = managed(&mut hostile, data.as_mut_ptr().cast());
        // SAFETY: a valid managed tensor, then hostile values in it.
        unsafe {
            (*m).dl_tensor.ndim = -1;
            assert_eq!(
                from_dlpack_versioned(m, 0, false).unwrap_err().to_string(),
                "ValueError: DLTensor has a negative ndim (-1)"
            );
            (*m).dl_tensor.ndim = 2;
            (*m).dl_tensor.shape = core::ptr::null_mut();
            assert_eq!(
                from_dlpack_versioned(m, 0, false).unwrap_err().to_string(),
                "ValueError: DLTensor has ndim 2 but a NULL shape"
            );
        }
        // Nothing was taken over: the caller still owns and releases it.
        assert_eq!(RELEASED.load(Ordering::SeqCst), before + 1);
        // SAFETY: still ours after the failed import.
        unsafe { release(m) };
    }

    #[test]
    fn views_copy_the_prototype_and_keep_the_source_alive() {
        let mut data = [0f32; 6];
        let mut shape = [2i64, 3];
        // SAFETY: a valid managed tensor.
        let source = unsafe {
            from_dlpack_versioned(managed(&mut shape, data.as_mut_ptr().cast()), 4, true)
        }
        .unwrap();
        let mut proto = *dl_tensor(&source).unwrap();
        let (mut view_shape, mut view_strides) = ([3i64], [2i64]);
        proto.ndim = 1;
        proto.shape = view_shape.as_mut_ptr();
        proto.strides = view_strides.as_mut_ptr();
        // SAFETY: the prototype's shape and strides hold `ndim` values.
        let view = unsafe { create_view(&source, &proto) }.unwrap();
        assert_eq!(source.strong_count(), 2);
        // The view copied them: changing the prototype's arrays changes nothing.
        // SAFETY: both point to one live value each.
        unsafe { (*proto.shape, *proto.strides) = (0, 0) };
        let dl = dl_tensor(&view).unwrap();
        // SAFETY: a tensor has `ndim` shape and stride values.
        let (s, st) = unsafe { (*dl.shape, *dl.strides) };
        assert_eq!((dl.ndim, s, st), (1, 3, 2));
        drop(view);
        assert_eq!(source.strong_count(), 1);
        proto.strides = core::ptr::null_mut();
        assert_eq!(
            // SAFETY: the shape holds `ndim` values; the strides are NULL.
            unsafe { create_view(&source, &proto) }
                .unwrap_err()
                .to_string(),
            "ValueError: TVMFFITensorCreateUnsafeView: the prototype needs strides"
        );
        let shape_obj = crate::runtime::value::scalar::new_shape(&[1]);
        assert_eq!(
            dl_tensor(&shape_obj).unwrap_err().to_string(),
            "TypeError: expected an ffi.Tensor, got ffi.Shape"
        );
    }
}
