//! What the CUDA module and Triton's kernels share on top of the driver:
//! device code loaded per device at its first use there (into the device's
//! primary context, unloaded when its owner goes), the current device, and
//! the device address a kernel's pointer argument stands for.

use super::driver::{self, Driver, Handle};
use crate::abi::*;
use crate::runtime::model::any::AnyView;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::value::tensor;
use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Devices device code can run on (TVM's `kMaxNumGPUs`).
pub(crate) const MAX_DEVICES: usize = 32;

/// One image's `CUmodule` per device, NULL until its first use there.
#[derive(Default)]
pub(crate) struct PerDevice {
    modules: [AtomicPtr<c_void>; MAX_DEVICES],
}

impl PerDevice {
    /// The image loaded on `device`, loading `image()` at the first call;
    /// threads that load at once keep the first and unload theirs.
    pub(crate) fn module_on(
        &self,
        d: &Driver,
        device: usize,
        image: impl FnOnce() -> Result<std::sync::Arc<Vec<u8>>>,
    ) -> Result<Handle> {
        let slot = &self.modules[device];
        let m = slot.load(Ordering::Acquire);
        if !m.is_null() {
            return Ok(m);
        }
        let m = d.load_module(device as c_int, &image()?)?;
        match slot.compare_exchange(
            core::ptr::null_mut(),
            m,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(m),
            Err(first) => {
                d.unload_module(device as c_int, m);
                Ok(first)
            }
        }
    }
}

impl Drop for PerDevice {
    fn drop(&mut self) {
        // Code that never ran loaded nothing: the driver is not opened here.
        let Some(d) = driver::loaded() else { return };
        for (device, slot) in self.modules.iter().enumerate() {
            let m = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
            if !m.is_null() {
                d.unload_module(device as c_int, m);
            }
        }
    }
}

/// The current CUDA device, and its index among [`MAX_DEVICES`].
pub(crate) fn current_device(d: &Driver) -> Result<(c_int, usize)> {
    let device = d.current_device()?;
    let index = usize::try_from(device)
        .ok()
        .filter(|&i| i < MAX_DEVICES)
        .ok_or_else(|| {
            Error::value(format!(
                "CUDA device {device}: at most {MAX_DEVICES} devices are supported"
            ))
        })?;
    Ok((device, index))
}

/// The device address a kernel pointer argument stands for: an opaque
/// pointer or None (NULL), an integer address, or a tensor's data (plus its
/// byte offset).
pub(crate) fn device_pointer(v: AnyView<'_>) -> Option<usize> {
    if let Some(p) = v.as_opaque_ptr() {
        return Some(p as usize);
    }
    if v.type_index() == kTVMFFIInt {
        return v.as_i64().map(|i| i as usize);
    }
    let t = tensor_of(v)?;
    Some((t.data as usize).wrapping_add(t.byte_offset as usize))
}

/// The DLTensor a tensor argument (a `DLTensor*` or a Tensor object)
/// describes; `None` for anything else.
pub(crate) fn tensor_of(v: AnyView<'_>) -> Option<DLTensor> {
    match v.type_index() {
        kTVMFFIDLTensorPtr => {
            // SAFETY: a DLTensor* argument is valid for the call (the
            // packed-call contract).
            unsafe { v.raw().value.v_ptr.cast::<DLTensor>().as_ref() }.copied()
        }
        _ => {
            let obj = v.borrow_object()?;
            tensor::dl_tensor(&obj).ok().copied()
        }
    }
}
