//! DLPack import of hostile tensors: any ndim, shape, strides, dtype, byte
//! offset, device and flags (with pointers that hold what they claim, as the
//! DLPack contract requires). The import returns a Tensor or an error, never
//! panics; the producer's deleter runs exactly once either way (on error the
//! caller still owns the tensor and releases it itself).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicUsize, Ordering};
use tvm_ffi::abi::*;
use tvm_ffi::runtime::tensor::{dl_tensor, from_dlpack_versioned};

static DELETED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn deleter(managed: *mut DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::Relaxed);
    // SAFETY: made by `Box::into_raw` below; the consumer releases it once.
    drop(unsafe { Box::from_raw(managed) });
}

/// Takes `N` bytes from the front of `data` (zero-padded when short).
fn take<const N: usize>(data: &mut &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = N.min(data.len());
    out[..n].copy_from_slice(&data[..n]);
    *data = &data[n..];
    out
}

fuzz_target!(|input: &[u8]| {
    let mut data = input;
    let [
        ndim,
        has_strides,
        code,
        bits,
        device,
        align,
        contiguous,
        flags,
    ] = take::<8>(&mut data);
    let lanes = u16::from_le_bytes(take(&mut data));
    let byte_offset = u64::from_le_bytes(take(&mut data));
    let ndim = usize::from(ndim % 12);
    let mut shape: Vec<i64> = (0..ndim)
        .map(|_| i64::from_le_bytes(take(&mut data)))
        .collect();
    let mut strides: Vec<i64> = (0..ndim)
        .map(|_| i64::from_le_bytes(take(&mut data)))
        .collect();
    let mut storage = [0u8; 64];
    let managed = Box::into_raw(Box::new(DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 1 },
        manager_ctx: core::ptr::null_mut(),
        deleter: Some(deleter),
        flags: u64::from(flags & 0b111),
        dl_tensor: DLTensor {
            data: storage.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: i32::from(device % 20),
                device_id: 0,
            },
            ndim: ndim as i32,
            dtype: DLDataType { code, bits, lanes },
            shape: if ndim == 0 {
                core::ptr::null_mut()
            } else {
                shape.as_mut_ptr()
            },
            strides: if has_strides & 1 == 1 {
                strides.as_mut_ptr()
            } else {
                core::ptr::null_mut()
            },
            byte_offset,
        },
    }));
    let before = DELETED.load(Ordering::Relaxed);
    // SAFETY: a valid managed tensor whose pointers hold `ndim` values.
    match unsafe { from_dlpack_versioned(managed, i32::from(align as i8), contiguous & 1 == 1) } {
        Ok(tensor) => {
            let dl = dl_tensor(&tensor).expect("an imported tensor is a Tensor");
            assert_eq!(dl.ndim as usize, ndim);
            drop(tensor);
            assert_eq!(
                DELETED.load(Ordering::Relaxed),
                before + 1,
                "deleter ran once"
            );
        }
        Err(_) => {
            assert_eq!(
                DELETED.load(Ordering::Relaxed),
                before,
                "nothing released on failure"
            );
            // SAFETY: the import failed, so the tensor is still ours.
            unsafe { deleter(managed) };
        }
    }
});
