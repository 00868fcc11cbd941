//! Kernel parameters: views of the caller's tensors for one call.
//!
//! - [`Slice<T>`]: the elements of a contiguous CPU tensor of `T`, read;
//! - [`SliceMut<T>`]: the same, written in place (the canonical
//!   `add_one(x, y)` writes into a `y` its caller allocated);
//! - [`DeviceView`]: a tensor on any device (CUDA, ROCm, Metal, ...) as
//!   pointer, shape, strides, dtype and device, with [`current_stream`] the
//!   caller's stream for launching work on it.
//!
//! Converting checks dtype, device and layout; a mismatch is the call's
//! `TypeError`, naming the argument and what was wrong. Within one thread
//! the views of one call cannot alias: a `SliceMut` whose elements overlap
//! another live view's is refused ("already borrowed"), so `add_one(x, x)`
//! gets an error instead of two Rust references to the same memory. What
//! other threads or languages do with a tensor while a kernel runs is the
//! C ABI's contract: the caller's responsibility, as for every TVM-FFI
//! kernel.

use crate::any::AnyView;
use crate::convert::{FromAny, TypeSchema};
use crate::error::{Error, Result};
use crate::sys::{self, DLTensor};
use crate::tensor::{DataType, Device, Element, cpu_elements, shape_of};
use core::cell::RefCell;
use core::ffi::c_void;

// The element ranges (start, end, written) that live views hold, on this
// thread.
thread_local! {
    static BORROWED: RefCell<Vec<(usize, usize, bool)>> = const { RefCell::new(Vec::new()) };
}

/// A view's claim on its elements, released when the view is dropped.
struct Borrow {
    range: (usize, usize, bool),
}

impl Borrow {
    /// Claims `len` bytes at `start`, written or read; `None` when a live
    /// view holds an overlapping range and one of the two writes.
    fn claim(start: usize, len: usize, written: bool) -> Option<Borrow> {
        let range = (start, start.saturating_add(len), written);
        if len == 0 {
            return Some(Borrow { range });
        }
        BORROWED.with_borrow_mut(|live| {
            let clash = live
                .iter()
                .any(|&(s, e, w)| (w || written) && s < range.1 && range.0 < e);
            (!clash).then(|| {
                live.push(range);
                Borrow { range }
            })
        })
    }
}

impl Drop for Borrow {
    fn drop(&mut self) {
        if self.range.0 == self.range.1 {
            return;
        }
        // A thread being torn down has dropped its list already.
        let _ = BORROWED.try_with(|live| {
            let mut live = live.borrow_mut();
            if let Some(at) = live.iter().rposition(|r| *r == self.range) {
                live.swap_remove(at);
            }
        });
    }
}

/// The DLTensor an argument holds: a tensor object or a `DLTensor*`.
fn dl_tensor<'a>(v: AnyView<'a>) -> Option<&'a DLTensor> {
    let raw = v.raw();
    if raw.bits == 0 {
        None
    } else if raw.type_index == sys::DLTENSOR_PTR {
        // SAFETY: a DLTensor* argument is valid for the call ('a).
        Some(unsafe { &*(raw.bits as *const DLTensor) })
    } else if crate::types::is_instance(raw.type_index, sys::TENSOR) {
        // SAFETY: a tensor's cell is its DLTensor; the view keeps the tensor
        // alive for 'a.
        Some(unsafe {
            &*(raw.bits as *const u8)
                .add(size_of::<sys::ObjectHeader>())
                .cast::<DLTensor>()
        })
    } else {
        None
    }
}

/// Whether a tensor object argument is flagged read-only (DLPack's
/// `READ_ONLY`), as its runtime exports it through DLPack 1.x (ours keeps
/// the flag of the tensor it imported; the reference drops it). A
/// `DLTensor*` carries no flags.
fn flagged_read_only(v: AnyView<'_>) -> bool {
    let raw = v.raw();
    if raw.type_index == sys::DLTENSOR_PTR {
        return false;
    }
    let mut out: *mut sys::DLManagedTensorVersioned = core::ptr::null_mut();
    // SAFETY: a live tensor object (the view holds it); a writable out.
    if unsafe { sys::TVMFFITensorToDLPackVersioned(raw.bits as sys::Handle, &mut out) } != 0 {
        drop(crate::error::Error::take_raised());
        return false;
    }
    // SAFETY: a fresh managed tensor we own: read, then released once.
    unsafe {
        let read_only = (*out).flags.contains(dlpark::DlpackFlags::READ_ONLY);
        if let Some(deleter) = (*out).deleter {
            deleter(out);
        }
        read_only
    }
}

/// The contiguous CPU elements of `T` an argument holds, claimed for
/// reading or writing: their start, count and shape, and the claim; or why
/// not (for the argument's error).
fn claim_elements<'a, T: Element>(
    v: AnyView<'a>,
    written: bool,
) -> Result<(*mut T, usize, &'a [i64], Borrow), String> {
    let dl = dl_tensor(v).ok_or_else(|| v.type_key())?;
    // SAFETY: the DLTensor and its data live for the call ('a).
    let (data, numel) = unsafe { cpu_elements::<T>(dl) }?;
    if written && flagged_read_only(v) {
        return Err("a read-only tensor".to_owned());
    }
    let borrow =
        Borrow::claim(data as usize, numel * size_of::<T>(), written).ok_or_else(|| {
            format!(
                "a tensor whose elements another argument already borrows{}",
                if written { "" } else { " to write" }
            )
        })?;
    // SAFETY: as above.
    Ok((data, numel, unsafe { shape_of(dl) }, borrow))
}

/// Why an argument is not a contiguous CPU tensor of `T` that can be
/// claimed, for its `TypeError` (`Expected ... but got <this>`): its type
/// key, or what is wrong with the tensor.
fn describe_elements<T: Element>(v: AnyView<'_>, written: bool) -> String {
    claim_elements::<T>(v, written)
        .err()
        .unwrap_or_else(|| v.type_key())
}

/// A kernel parameter: the elements of a contiguous CPU tensor of `T`,
/// read for the call. Converting checks dtype, device and layout; a
/// mismatch is the call's `TypeError`.
pub struct Slice<'a, T> {
    data: &'a [T],
    shape: &'a [i64],
    _claim: Borrow,
}

impl<T> Slice<'_, T> {
    /// The tensor's shape.
    pub fn shape(&self) -> &[i64] {
        self.shape
    }
    /// Fails with a `ValueError` naming the argument `name` unless the
    /// tensor has shape `shape`.
    pub fn expect_shape(&self, name: &str, shape: &[i64]) -> Result<()> {
        expect_shape(name, self.shape, shape)
    }
}

impl<T> core::ops::Deref for Slice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<'a, T: Element> FromAny<'a> for Slice<'a, T> {
    fn schema() -> TypeSchema {
        TypeSchema::named("ffi.Tensor", T::SLICE_TEXT)
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        let (data, numel, shape, claim) = claim_elements::<T>(v, false).ok()?;
        // SAFETY: `numel` elements of `T` at `data`, alive for the call and
        // written by no other view of this thread (the claim).
        let data = unsafe { core::slice::from_raw_parts(data, numel) };
        Some(Slice {
            data,
            shape,
            _claim: claim,
        })
    }
    fn describe(v: AnyView<'_>) -> String {
        describe_elements::<T>(v, false)
    }
}

/// A kernel parameter: the elements of a contiguous CPU tensor of `T`,
/// written in place for the call (an output its caller allocated).
/// Converting checks dtype, device and layout, and that no other argument
/// of the call views the same elements.
///
/// ```
/// # extern crate tvm_ffi_runtime;
/// use tvmffi::{Result, Slice, SliceMut, export};
///
/// /// Writes `x + 1` into `y`.
/// #[export]
/// fn add_one(x: Slice<f32>, mut y: SliceMut<f32>) -> Result<()> {
///     y.expect_shape("y", x.shape())?;
///     for (y, x) in y.iter_mut().zip(x.iter()) {
///         *y = x + 1.0;
///     }
///     Ok(())
/// }
/// ```
pub struct SliceMut<'a, T> {
    data: &'a mut [T],
    shape: &'a [i64],
    _claim: Borrow,
}

impl<T> SliceMut<'_, T> {
    /// The tensor's shape.
    pub fn shape(&self) -> &[i64] {
        self.shape
    }
    /// Fails with a `ValueError` naming the argument `name` unless the
    /// tensor has shape `shape`.
    pub fn expect_shape(&self, name: &str, shape: &[i64]) -> Result<()> {
        expect_shape(name, self.shape, shape)
    }
}

fn expect_shape(name: &str, got: &[i64], want: &[i64]) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::value_error(format!(
            "argument `{name}` has shape {got:?}, expected {want:?}"
        )))
    }
}

impl<T> core::ops::Deref for SliceMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<T> core::ops::DerefMut for SliceMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.data
    }
}

impl<'a, T: Element> FromAny<'a> for SliceMut<'a, T> {
    fn schema() -> TypeSchema {
        TypeSchema::named("ffi.Tensor", T::SLICE_TEXT)
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        let (data, numel, shape, claim) = claim_elements::<T>(v, true).ok()?;
        // SAFETY: `numel` elements of `T` at `data`, alive for the call and
        // viewed by no other view of this thread (the claim). Writers in
        // other threads or languages are the caller's to exclude (the C
        // ABI's contract for every kernel).
        let data = unsafe { core::slice::from_raw_parts_mut(data, numel) };
        Some(SliceMut {
            data,
            shape,
            _claim: claim,
        })
    }
    fn describe(v: AnyView<'_>) -> String {
        describe_elements::<T>(v, true)
    }
}

/// A kernel parameter: a tensor on any device, as the addresses and layout
/// a device kernel launch needs. Nothing here reads the elements.
pub struct DeviceView<'a> {
    dl: &'a DLTensor,
}

impl DeviceView<'_> {
    /// The address of the first element (`data + byte_offset`), on the
    /// tensor's device.
    pub fn data_ptr(&self) -> *mut c_void {
        (self.dl.data as usize).wrapping_add(self.dl.byte_offset as usize) as *mut c_void
    }
    /// The shape.
    pub fn shape(&self) -> &[i64] {
        // SAFETY: the DLTensor is valid for the view's life.
        unsafe { shape_of(self.dl) }
    }
    /// The strides in elements, or `None` for a compact row-major tensor.
    pub fn strides(&self) -> Option<&[i64]> {
        (!self.dl.strides.is_null()).then(|| {
            // SAFETY: non-NULL strides hold `ndim` entries.
            unsafe { core::slice::from_raw_parts(self.dl.strides, self.shape().len()) }
        })
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        DataType(self.dl.dtype)
    }
    /// The device the data is on.
    pub fn device(&self) -> Device {
        Device {
            kind: self.dl.device.device_type.0,
            id: self.dl.device.device_id,
        }
    }
    /// The caller's current stream on this tensor's device (see
    /// [`current_stream`]).
    pub fn stream(&self) -> *mut c_void {
        current_stream(self.device())
    }
}

impl<'a> FromAny<'a> for DeviceView<'a> {
    fn schema() -> TypeSchema {
        TypeSchema::leaf("ffi.Tensor")
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        dl_tensor(v).map(|dl| DeviceView { dl })
    }
}

/// The stream the caller set for `device` with `TVMFFIEnvSetStream` (what
/// PyTorch's current stream becomes when Python calls a TVM-FFI function),
/// or NULL for the default stream: launch device work on it.
pub fn current_stream(device: Device) -> *mut c_void {
    // SAFETY: a plain query of the runtime's per-thread table.
    unsafe { sys::TVMFFIEnvGetStream(device.kind as i32, device.id) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Any, IntoAny, Tensor};

    #[test]
    fn views_of_one_tensor_may_share_but_not_alias_a_writer() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
        let a: Any = t.into_any().unwrap();
        let r1 = a.get::<Slice<f32>>().expect("a reader");
        let r2 = a.get::<Slice<f32>>().expect("two readers share");
        assert!(
            a.get::<SliceMut<f32>>().is_none(),
            "a writer beside readers"
        );
        drop((r1, r2));
        let mut w = a.get::<SliceMut<f32>>().expect("a writer alone");
        assert!(a.get::<Slice<f32>>().is_none(), "a reader beside a writer");
        assert!(a.get::<SliceMut<f32>>().is_none(), "two writers");
        w[0] = 5.0;
        drop(w);
        assert_eq!(&*a.get::<Slice<f32>>().unwrap(), &[5.0, 2.0, 3.0]);
        assert_eq!(
            SliceMut::<f32>::describe(a.view()),
            "ffi.Tensor",
            "free again: nothing wrong to describe"
        );
    }

    /// A DLPack 1.x tensor of three f32 over `data`, flagged `flags`,
    /// imported; its deleter frees only the managed struct.
    fn borrowed_tensor(data: *mut c_void, flags: dlpark::DlpackFlags) -> Tensor {
        static SHAPE: [i64; 1] = [3];
        unsafe extern "C" fn free(m: *mut sys::DLManagedTensorVersioned) {
            // SAFETY: made by `Box::into_raw` below, released once.
            drop(unsafe { Box::from_raw(m) });
        }
        let managed = Box::into_raw(Box::new(sys::DLManagedTensorVersioned {
            version: dlpark::ffi::DLPackVersion { major: 1, minor: 1 },
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(free),
            flags,
            dl_tensor: DLTensor {
                data,
                device: sys::DLDevice {
                    device_type: dlpark::ffi::DLDeviceType(1),
                    device_id: 0,
                },
                ndim: 1,
                dtype: f32::DTYPE.0,
                shape: SHAPE.as_ptr().cast_mut(),
                strides: core::ptr::null_mut(),
                byte_offset: 0,
            },
        }));
        // SAFETY: a complete managed tensor.
        let dlpack = unsafe { dlpark::versioned::Dlpack::from_raw(managed.cast()) }.unwrap();
        Tensor::from_dlpack(dlpack).unwrap()
    }

    #[test]
    fn a_read_only_tensor_is_no_slice_mut() {
        // Read-only memory: a write would fault.
        static DATA: [f32; 3] = [1.0, 2.0, 3.0];
        let data = DATA.as_ptr().cast_mut().cast();
        let t = borrowed_tensor(data, dlpark::DlpackFlags::READ_ONLY);
        let a: Any = t.into_any().unwrap();
        assert!(a.get::<SliceMut<f32>>().is_none());
        assert_eq!(SliceMut::<f32>::describe(a.view()), "a read-only tensor");
        assert_eq!(&*a.get::<Slice<f32>>().expect("read"), &DATA);
    }

    #[test]
    fn elements_that_wrap_the_address_space_are_refused() {
        // 12 bytes from 8 bytes below the top of the address space.
        let data = (usize::MAX - 7) & !3;
        let t = borrowed_tensor(data as *mut c_void, dlpark::DlpackFlags::empty());
        let a: Any = t.into_any().unwrap();
        assert!(a.get::<Slice<f32>>().is_none());
        assert!(a.get::<SliceMut<f32>>().is_none());
        assert_eq!(
            Slice::<f32>::describe(a.view()),
            "a tensor with NULL, misaligned or out-of-range data"
        );
    }

    #[test]
    fn a_wrong_tensor_is_described() {
        let t = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        let a: Any = t.into_any().unwrap();
        assert_eq!(SliceMut::<f32>::describe(a.view()), "a tensor of int64");
        assert_eq!(
            Slice::<f32>::describe(3i64.into_any().unwrap().view()),
            "int"
        );
    }
}
