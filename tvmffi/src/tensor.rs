//! [`Tensor`]: an n-dimensional array shared with every framework through
//! DLPack (NumPy, PyTorch, JAX, dlpark), its data types and devices.

use crate::any::Any;
use crate::error::{Error, Result, check};
use crate::handle::Obj;
use crate::sys::{self, DLDataType, DLDevice, DLManagedTensorVersioned, DLTensor, Handle, RawAny};
use core::ffi::c_void;
use dlpark::ffi::{DLDataTypeCode, DLDeviceType, DLPackVersion};

/// A tensor (`ffi.Tensor`). Cloning shares the data.
#[derive(Clone)]
pub struct Tensor(Obj);

/// An element type of CPU tensors made or read from Rust.
pub trait Element: Copy + Send + Sync + 'static {
    /// Its DLPack data type.
    const DTYPE: DataType;
    /// `Tensor<float32, cpu, contiguous>`, as [`Slice`](crate::Slice) errors name it.
    const SLICE_TEXT: &'static str;
}

macro_rules! elements {
    ($($t:ty => $code:expr, $bits:expr, $name:literal;)*) => {$(
        impl Element for $t {
            const DTYPE: DataType = DataType(DLDataType { code: DLDataTypeCode($code), bits: $bits, lanes: 1 });
            const SLICE_TEXT: &'static str = concat!("Tensor<", $name, ", cpu, contiguous>");
        }
    )*};
}
elements! {
    i8 => 0, 8, "int8"; i16 => 0, 16, "int16"; i32 => 0, 32, "int32"; i64 => 0, 64, "int64";
    u8 => 1, 8, "uint8"; u16 => 1, 16, "uint16"; u32 => 1, 32, "uint32"; u64 => 1, 64, "uint64";
    f32 => 2, 32, "float32"; f64 => 2, 64, "float64";
}

/// A DLPack data type (`float32`, `int64x4`, ...).
#[derive(Clone, Copy)]
pub struct DataType(pub DLDataType);

impl DataType {
    /// Parses `float32`, `int8`, `bfloat16`, ... as the runtime does.
    pub fn parse(text: &str) -> Result<DataType> {
        let mut out = DLDataType {
            code: DLDataTypeCode(0),
            bits: 0,
            lanes: 0,
        };
        // SAFETY: valid text; writable out.
        check(unsafe {
            sys::TVMFFIDataTypeFromString(&sys::ByteArray::of(text.as_bytes()), &mut out)
        })?;
        Ok(DataType(out))
    }
    /// Bytes per element (rounded up to whole bytes).
    pub fn element_bytes(&self) -> usize {
        (self.0.bits as usize * self.0.lanes as usize).div_ceil(8)
    }
}

impl PartialEq for DataType {
    fn eq(&self, other: &DataType) -> bool {
        (self.0.code.0, self.0.bits, self.0.lanes) == (other.0.code.0, other.0.bits, other.0.lanes)
    }
}

impl core::fmt::Display for DataType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut out = RawAny::NONE;
        // SAFETY: valid dtype; writable out, owned on success.
        let text = (unsafe { sys::TVMFFIDataTypeToString(&self.0, &mut out) } == 0)
            // SAFETY: as above.
            .then(|| unsafe { Any::from_raw(out) });
        match text.as_ref().and_then(|t| t.get::<&str>()) {
            Some(s) => f.write_str(s),
            None => write!(
                f,
                "dtype({}, {}, {})",
                self.0.code.0, self.0.bits, self.0.lanes
            ),
        }
    }
}

impl core::fmt::Debug for DataType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(self, f)
    }
}

/// Where a tensor's data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    /// `DLDeviceType` (1 = CPU, 2 = CUDA, ...).
    pub kind: u32,
    /// Device ordinal.
    pub id: i32,
}

impl Device {
    /// The host CPU.
    pub const CPU: Device = Device { kind: 1, id: 0 };
}

impl Tensor {
    /// A tensor that owns `data` (no copy), laid out row-major as `shape`.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[i64]) -> Result<Tensor> {
        let numel = numel(shape)?;
        if numel != data.len() as u64 {
            return Err(Error::value_error(format!(
                "Tensor::from_vec: shape {shape:?} holds {numel} elements, the data {}",
                data.len()
            )));
        }
        Tensor::adopt(
            Box::new(Owned {
                data,
                shape: shape.to_vec(),
            }),
            T::DTYPE,
        )
    }
    /// A zero-filled CPU tensor of `shape` and `dtype`. Other devices
    /// allocate through their framework (pass their tensors in instead).
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        if device != Device::CPU {
            return Err(Error::value_error(format!(
                "Tensor::empty allocates on the CPU only, got device ({}, {})",
                device.kind, device.id
            )));
        }
        let bytes = numel(shape)?
            .checked_mul(dtype.element_bytes() as u64)
            .filter(|b| *b <= isize::MAX as u64)
            .ok_or_else(|| {
                Error::value_error(format!("Tensor::empty: {shape:?} of {dtype} is too large"))
            })?;
        let chunks = vec![Chunk([0; 64]); (bytes as usize).div_ceil(64)];
        Tensor::adopt(
            Box::new(Owned {
                data: chunks,
                shape: shape.to_vec(),
            }),
            dtype,
        )
    }
    /// Hands `owned` to the runtime as a DLPack tensor it releases.
    fn adopt<T: Send + 'static>(owned: Box<Owned<T>>, dtype: DataType) -> Result<Tensor> {
        let owned = Box::into_raw(owned);
        // SAFETY: `owned` is ours until the deleter runs.
        let (data, shape, ndim) = unsafe {
            (
                (*owned).data.as_ptr() as *mut c_void,
                (*owned).shape.as_mut_ptr(),
                (*owned).shape.len(),
            )
        };
        let managed = Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: owned.cast(),
            deleter: Some(release_owned::<T>),
            flags: dlpark::DlpackFlags::empty(),
            dl_tensor: DLTensor {
                data,
                device: DLDevice {
                    device_type: DLDeviceType(1),
                    device_id: 0,
                },
                ndim: ndim as i32,
                dtype: dtype.0,
                shape,
                strides: core::ptr::null_mut(),
                byte_offset: 0,
            },
        }));
        let mut out: Handle = core::ptr::null_mut();
        // SAFETY: a complete managed tensor; on success the runtime owns it.
        let rc = unsafe { sys::TVMFFITensorFromDLPackVersioned(managed, 0, 0, &mut out) };
        if rc != 0 {
            // SAFETY: the import failed, so it is still ours to release.
            unsafe { release_owned::<T>(managed) };
            return Err(Error::take_raised());
        }
        // SAFETY: a new tensor with one reference for us.
        Ok(Tensor(unsafe { Obj::from_owned(out) }))
    }
    /// Takes a dlpark (DLPack 1.x) tensor without copying.
    pub fn from_dlpack(tensor: dlpark::versioned::Dlpack) -> Result<Tensor> {
        let raw = tensor.into_raw().cast::<DLManagedTensorVersioned>();
        let mut out: Handle = core::ptr::null_mut();
        // SAFETY: a complete managed tensor whose ownership we hold.
        let rc = unsafe { sys::TVMFFITensorFromDLPackVersioned(raw, 0, 0, &mut out) };
        if rc != 0 {
            // SAFETY: the import failed: release it as dlpark would.
            drop(unsafe { dlpark::versioned::Dlpack::from_raw(raw.cast()) });
            return Err(Error::take_raised());
        }
        // SAFETY: a new tensor with one reference for us.
        Ok(Tensor(unsafe { Obj::from_owned(out) }))
    }
    /// Shares the tensor through DLPack 1.x: the guard keeps it alive and
    /// releases it when dropped (`dlpark` converts it further).
    pub fn to_dlpack(&self) -> Result<dlpark::versioned::Dlpack> {
        let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
        // SAFETY: a live tensor; writable out.
        check(unsafe { sys::TVMFFITensorToDLPackVersioned(self.0.handle(), &mut out) })?;
        // SAFETY: a fresh managed tensor we own.
        unsafe { dlpark::versioned::Dlpack::from_raw(out.cast()) }
            .map_err(|e| Error::runtime_error(format!("dlpark refused the tensor: {e}")))
    }
    pub(crate) fn dl(&self) -> &DLTensor {
        // SAFETY: a tensor's cell is its DLTensor, alive while we hold it.
        unsafe { &*self.0.cell::<DLTensor>() }
    }
    /// The shape.
    pub fn shape(&self) -> &[i64] {
        // SAFETY: the runtime checked the shape when the tensor was made.
        unsafe { shape_of(self.dl()) }
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        DataType(self.dl().dtype)
    }
    /// The device.
    pub fn device(&self) -> Device {
        Device {
            kind: self.dl().device.device_type.0,
            id: self.dl().device.device_id,
        }
    }
    /// The elements, if the tensor is a contiguous CPU tensor of `T`.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        // SAFETY: the tensor is alive while `self` is borrowed.
        unsafe { cpu_slice::<T>(self.dl()) }
            .map_err(|why| Error::type_error(format!("expected a {}, got {}", T::SLICE_TEXT, why)))
    }
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u8; 64]);

/// What a tensor made from Rust data owns.
struct Owned<T> {
    data: Vec<T>,
    shape: Vec<i64>,
}

unsafe extern "C" fn release_owned<T>(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: the managed tensor and its context were made by `adopt`, and
    // DLPack calls the deleter once.
    let _ = crate::export::guard("tensor deleter", || unsafe {
        let managed = Box::from_raw(managed);
        drop(Box::from_raw(managed.manager_ctx.cast::<Owned<T>>()));
        Ok(())
    });
}

fn numel(shape: &[i64]) -> Result<u64> {
    shape.iter().try_fold(1u64, |n, &d| {
        u64::try_from(d)
            .ok()
            .and_then(|d| n.checked_mul(d))
            .ok_or_else(|| {
                Error::value_error(format!(
                    "invalid shape {shape:?}: negative or too many elements"
                ))
            })
    })
}

/// # Safety
/// `dl` is a valid DLTensor whose shape holds `ndim` entries.
pub(crate) unsafe fn shape_of(dl: &DLTensor) -> &[i64] {
    if dl.ndim <= 0 || dl.shape.is_null() {
        return &[];
    }
    // SAFETY: the caller's promise.
    unsafe { core::slice::from_raw_parts(dl.shape, dl.ndim as usize) }
}

/// The elements of a contiguous CPU tensor of `T`, or why not.
///
/// # Safety
/// `dl` is a valid DLTensor whose data lives as long as `dl` is borrowed.
pub(crate) unsafe fn cpu_slice<T: Element>(dl: &DLTensor) -> core::result::Result<&[T], String> {
    // SAFETY: the caller's promise.
    let (data, numel) = unsafe { cpu_elements::<T>(dl) }?;
    if numel == 0 {
        return Ok(&[]);
    }
    // SAFETY: `numel` elements of `T` at `data`, alive while `dl` is
    // borrowed (the caller's promise).
    Ok(unsafe { core::slice::from_raw_parts(data, numel) })
}

/// Where the elements of a contiguous CPU tensor of `T` start and how many
/// there are (a dangling, aligned start when there are none), or why the
/// tensor is not one.
///
/// # Safety
/// `dl` is a valid DLTensor.
pub(crate) unsafe fn cpu_elements<T: Element>(
    dl: &DLTensor,
) -> core::result::Result<(*mut T, usize), String> {
    let dtype = DataType(dl.dtype);
    if dtype != T::DTYPE {
        return Err(format!("a tensor of {dtype}"));
    }
    if dl.device.device_type.0 != 1 {
        return Err(format!(
            "a tensor on device ({}, {})",
            dl.device.device_type.0, dl.device.device_id
        ));
    }
    // SAFETY: the caller's promise.
    let shape = unsafe { shape_of(dl) };
    let numel = numel(shape).map_err(|e| e.message().to_owned())?;
    if !dl.strides.is_null() && numel > 1 {
        // SAFETY: strides hold `ndim` entries when not NULL.
        let strides = unsafe { core::slice::from_raw_parts(dl.strides, shape.len()) };
        let mut expect = 1i64;
        for (&d, &s) in shape.iter().zip(strides).rev() {
            if d != 1 && s != expect {
                return Err(format!(
                    "a non-contiguous tensor (shape {shape:?}, strides {strides:?})"
                ));
            }
            expect = expect.saturating_mul(d);
        }
    }
    if numel == 0 {
        return Ok((core::ptr::NonNull::dangling().as_ptr(), 0));
    }
    // The elements must lie within the address space: their start plus
    // their size may not wrap.
    let addr = (dl.data as usize).checked_add(dl.byte_offset as usize);
    let fits = |a: usize| {
        numel <= (isize::MAX as u64) / size_of::<T>() as u64
            && a.checked_add(numel as usize * size_of::<T>()).is_some()
    };
    match addr {
        Some(a) if a != 0 && a % align_of::<T>() == 0 && fits(a) => {
            Ok((a as *mut T, numel as usize))
        }
        _ => Err("a tensor with NULL, misaligned or out-of-range data".to_owned()),
    }
}

crate::convert::object_conversions!(Tensor, "ffi.Tensor", sys::TENSOR);

impl core::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, dtype={}, device={:?})",
            self.shape(),
            self.dtype(),
            self.device()
        )
    }
}
