//! DLPack tensors with hostile fields (a byte offset that wraps the address
//! space, NULL data under a nonzero size, a size that overflows) get a
//! clear error from every operation that reads their contents (structural
//! hash and equality, recursive hash and equality, deep copy, repr and the
//! JSON graph), never a crash. The reference crashes in structural hashing.

use tvm_ffi::abi::*;
use tvm_ffi::runtime::registry::get_global;
use tvm_ffi::runtime::{Any, ObjectRef};

/// A leaked shape and the bytes the tensors below point into.
fn leaked_shape(dims: &[i64]) -> *mut i64 {
    Box::leak(dims.to_vec().into_boxed_slice()).as_mut_ptr()
}

/// Imports a float32 CPU tensor with `data`, `byte_offset` and `shape`
/// (never freed: it has no deleter).
fn import(data: *mut core::ffi::c_void, byte_offset: u64, shape: &[i64]) -> ObjectRef {
    let managed = Box::leak(Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data,
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            ndim: shape.len() as i32,
            dtype: DLDataType {
                code: kDLFloat as u8,
                bits: 32,
                lanes: 1,
            },
            shape: leaked_shape(shape),
            strides: core::ptr::null_mut(),
            byte_offset,
        },
        manager_ctx: core::ptr::null_mut(),
        deleter: None,
    }));
    let mut out = core::ptr::null_mut();
    // SAFETY: a valid managed tensor, handed over; `out` is writable.
    let rc = unsafe { tvm_ffi::capi::TVMFFITensorFromDLPack(managed, 0, 0, &mut out) };
    assert_eq!(rc, 0, "the import itself is accepted, as by the reference");
    // SAFETY: the import answered a new Tensor object.
    unsafe { ObjectRef::from_raw(core::ptr::NonNull::new(out.cast()).unwrap()) }
}

/// What each content-reading operation answers for `tensor`.
fn every_operation(tensor: &ObjectRef) -> Vec<String> {
    let t = Any::from(tensor.clone());
    let call = |name: &str, args: &[&Any]| {
        let f = get_global(name.as_bytes()).unwrap();
        let views: Vec<_> = args.iter().map(|a| a.view()).collect();
        match f.call(&views) {
            Ok(_) => format!("{name}: ok"),
            Err(e) => format!("{name}: {e}"),
        }
    };
    let no = Any::from(false);
    vec![
        call("ffi.StructuralHash", &[&t, &no, &no]),
        call("ffi.StructuralEqual", &[&t, &t, &no, &no]),
        call("ffi.DeepCopy", &[&t]),
        call("ffi.ReprPrint", &[&t]),
        call("ffi.RecursiveHash", &[&t]),
        call("ffi.ToJSONGraphString", &[&t, &Any::NONE]),
    ]
}

#[test]
fn a_byte_offset_wrapping_the_address_space_is_an_error_everywhere() {
    let data = Box::leak(Box::new([0f32; 4])).as_mut_ptr().cast();
    let hostile = import(data, u64::MAX - 7, &[4]);
    let answers = every_operation(&hostile);
    let hash = &answers[0];
    assert!(
        hash.starts_with("ffi.StructuralHash: ValueError: can only hash contiguous CPU tensors: the tensor's data at")
            && hash.ends_with("wraps the address space"),
        "{answers:#?}"
    );
    // A tensor equals itself without reading its data, as in the reference.
    assert_eq!(answers[1], "ffi.StructuralEqual: ok", "{answers:#?}");
    // Repr shows dtype, shape and device: no data is read.
    assert_eq!(answers[3], "ffi.ReprPrint: ok");
}

#[test]
fn null_data_and_overflowing_sizes_are_errors_everywhere() {
    let null = import(core::ptr::null_mut(), 0, &[4]);
    let answers = every_operation(&null);
    assert!(
        answers[0].ends_with("the tensor has NULL data"),
        "{answers:#?}"
    );
    let data = Box::leak(Box::new([0f32; 4])).as_mut_ptr().cast();
    let huge = import(data, 0, &[1 << 40, 1 << 40]);
    let answers = every_operation(&huge);
    assert!(
        answers[0].ends_with("the tensor's byte size overflows"),
        "{answers:#?}"
    );
}
