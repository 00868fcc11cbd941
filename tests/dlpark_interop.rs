//! Tensors move between tvm-ffi-rs and dlpark without copying, and the
//! producer's deleter runs exactly once, after the last holder lets go.

use std::sync::atomic::{AtomicUsize, Ordering};
use tvm_ffi::abi::*;
use tvm_ffi::runtime::tensor::{dl_tensor, from_dlpark, to_dlpark};

static DELETED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn delete(m: *mut dlpark::ffi::DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the tensor below was boxed by the test.
    drop(unsafe { Box::from_raw(m) });
}

#[test]
fn dlpark_round_trip_shares_data_and_releases_once() {
    let data: &'static mut [f32] = Box::leak(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0].into_boxed_slice());
    let shape: &'static mut [i64] = Box::leak(vec![2i64, 3].into_boxed_slice());
    // A producer-made tensor, as any dlpark user would receive one.
    let managed = Box::new(dlpark::ffi::DLManagedTensorVersioned {
        version: dlpark::ffi::DLPackVersion { major: 1, minor: 1 },
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(delete),
        flags: dlpark::DlpackFlags::empty(),
        dl_tensor: dlpark::ffi::DLTensor {
            data: data.as_mut_ptr().cast(),
            device: dlpark::ffi::DLDevice {
                device_type: dlpark::ffi::DLDeviceType(kDLCPU as u32),
                device_id: 0,
            },
            ndim: 2,
            dtype: dlpark::ffi::DLDataType {
                code: dlpark::ffi::DLDataTypeCode(kDLFloat as u8),
                bits: 32,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        },
    });
    // SAFETY: a valid, owned managed tensor.
    let from_producer =
        unsafe { dlpark::versioned::Dlpack::from_raw(Box::into_raw(managed)) }.unwrap();

    let tensor = from_dlpark(from_producer).unwrap();
    let dl = dl_tensor(&tensor).unwrap();
    assert_eq!(dl.data, data.as_mut_ptr().cast(), "no copy on import");
    // SAFETY: compact strides were filled in for the 2 dimensions.
    let strides = unsafe { std::slice::from_raw_parts(dl.strides, 2) };
    assert_eq!(strides, &[3, 1]);

    let exported = to_dlpark(&tensor).unwrap();
    drop(tensor);
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        0,
        "the export keeps the tensor alive"
    );
    let view = exported.validate().unwrap();
    assert_eq!(view.shape(), &[2, 3]);
    // SAFETY: the exported tensor shares the producer's data.
    assert_eq!(unsafe { *exported.tensor() }.data, data.as_mut_ptr().cast());
    drop(exported);
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
}
