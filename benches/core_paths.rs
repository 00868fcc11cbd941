//! Criterion benchmarks of the core C-API paths, called through the same
//! `extern "C"` entry points C code uses. The C benchmark
//! (`c-tests/bench/run.sh`) compares the same paths with the official library.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::os::raw::{c_int, c_void};
use tvm_ffi::abi::*;
use tvm_ffi::capi::*;
use tvm_ffi::runtime::{Any, Function};

unsafe extern "C" fn nop(
    _: *mut c_void,
    _: *const TVMFFIAny,
    _: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: the caller provides a writable result.
    unsafe { (*result).type_index = kTVMFFINone };
    0
}

fn byte_array(s: &[u8]) -> TVMFFIByteArray {
    TVMFFIByteArray {
        data: s.as_ptr().cast(),
        size: s.len(),
    }
}

fn calls(c: &mut Criterion) {
    let self_value = 1i32;
    let extern_c = Function::from_extern_c((&raw const self_value).cast_mut().cast(), nop, None);
    let closure = Function::from_closure(|_| Ok(Any::NONE));
    let mut args = [TVMFFIAny::NONE; 3];
    args[0] = Any::from(1i64).into_raw();
    args[1] = Any::from(2.0f64).into_raw();
    for (label, f) in [("extern_c", &extern_c), ("rust_closure", &closure)] {
        let handle = f.as_object().as_ptr().cast::<c_void>();
        for n in [0, 1, 3] {
            c.bench_function(&format!("call/{label}/{n}_args"), |b| {
                b.iter(|| {
                    let mut result = TVMFFIAny::NONE;
                    // SAFETY: a live function, valid arguments and result.
                    black_box(unsafe {
                        TVMFFIFunctionCall(handle, args.as_mut_ptr(), n, &mut result)
                    })
                })
            });
        }
    }
}

fn registry_and_objects(c: &mut Criterion) {
    let name = byte_array(b"ffi.FunctionRemoveGlobal");
    c.bench_function("global_lookup", |b| {
        b.iter(|| {
            let mut out = std::ptr::null_mut();
            // SAFETY: valid name and out pointer; the result is released.
            unsafe {
                TVMFFIFunctionGetGlobal(&name, &mut out);
                TVMFFIObjectDecRef(black_box(out));
            }
        })
    });
    let f = Function::from_closure(|_| Ok(Any::NONE));
    let handle = f.as_object().as_ptr().cast::<c_void>();
    c.bench_function("incref_decref", |b| {
        // SAFETY: `f` keeps the object alive throughout.
        b.iter(|| unsafe {
            TVMFFIObjectIncRef(black_box(handle));
            TVMFFIObjectDecRef(black_box(handle));
        })
    });
}

fn strings_and_errors(c: &mut Criterion) {
    for (label, text) in [
        ("string_small", &b"hello"[..]),
        ("string_64_bytes", &[b'x'; 64][..]),
    ] {
        let input = byte_array(text);
        c.bench_function(label, |b| {
            b.iter(|| {
                let mut out = TVMFFIAny::NONE;
                // SAFETY: valid input and output; the value is released.
                unsafe { TVMFFIStringFromByteArray(&input, &mut out) };
                // SAFETY: we own the value written to `out`.
                drop(unsafe { Any::from_raw(black_box(out)) });
            })
        });
    }
    c.bench_function("error_raise_fetch", |b| {
        b.iter(|| {
            let mut err = std::ptr::null_mut();
            // SAFETY: NUL-terminated strings; the fetched error is released.
            unsafe {
                TVMFFIErrorSetRaisedFromCStr(c"ValueError".as_ptr(), c"benchmark error".as_ptr());
                TVMFFIErrorMoveFromRaised(&mut err);
                TVMFFIObjectDecRef(black_box(err));
            }
        })
    });
}

unsafe extern "C" fn noop_deleter(_: *mut DLManagedTensor) {}

fn tensors_and_containers(c: &mut Criterion) {
    let mut data = [0f32; 64];
    let mut shape = [8i64, 8];
    let mut managed = DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            ndim: 2,
            dtype: DLDataType {
                code: kDLFloat as u8,
                bits: 32,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        },
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(noop_deleter),
    };
    c.bench_function("tensor_from_dlpack", |b| {
        b.iter(|| {
            let mut t = std::ptr::null_mut();
            // SAFETY: a valid managed tensor whose deleter does nothing.
            unsafe {
                TVMFFITensorFromDLPack(&mut managed, 0, 0, &mut t);
                TVMFFIObjectDecRef(black_box(t));
            }
        })
    });
    let get = |name: &str| tvm_ffi::runtime::registry::get_global(name.as_bytes()).unwrap();
    let items: Vec<Any> = (0..16i64).map(Any::from).collect();
    let views: Vec<_> = items.iter().map(Any::view).collect();
    let array = get("ffi.Array").call(&views).unwrap();
    let array_get = get("ffi.ArrayGetItem");
    let args = [array.view(), items[7].view()];
    c.bench_function("array_get_item", |b| {
        b.iter(|| black_box(array_get.call(&args).unwrap()))
    });
    let keys: Vec<Any> = (0..64)
        .map(|i| {
            tvm_ffi::runtime::make_text(
                format!("map-key-{i:04}").as_bytes(),
                tvm_ffi::runtime::TextKind::Str,
            )
        })
        .collect();
    let map_get = get("ffi.MapGetItem");
    for (label, n) in [("map_get_item_small", 3), ("map_get_item_dense", 64)] {
        let kv: Vec<_> = keys[..n]
            .iter()
            .zip(items.iter().cycle())
            .flat_map(|(k, v)| [k.view(), v.view()])
            .collect();
        let map = get("ffi.Map").call(&kv).unwrap();
        let args = [map.view(), keys[n / 2].view()];
        c.bench_function(label, |b| {
            b.iter(|| black_box(map_get.call(&args).unwrap()))
        });
    }
}

/// The per-launch paths of generated kernels and a built-in object global.
fn env_dtype_and_shape(c: &mut Criterion) {
    let stream = 0x1234 as *mut c_void;
    // SAFETY: a valid device and stream; the previous stream is not asked for.
    unsafe { TVMFFIEnvSetStream(2, 0, stream, std::ptr::null_mut()) };
    c.bench_function("env_get_stream", |b| {
        b.iter(|| black_box(TVMFFIEnvGetStream(black_box(2), black_box(0))))
    });
    let name = byte_array(b"float32");
    c.bench_function("dtype_from_string", |b| {
        b.iter(|| {
            let mut dtype = DLDataType {
                code: 0,
                bits: 0,
                lanes: 0,
            };
            // SAFETY: valid name and output.
            black_box(unsafe { TVMFFIDataTypeFromString(&name, &mut dtype) });
            dtype
        })
    });
    let shape = tvm_ffi::runtime::registry::get_global(b"ffi.Shape").unwrap();
    let dims = [Any::from(1i64), Any::from(2i64), Any::from(3i64)];
    let dims: Vec<_> = dims.iter().map(|d| d.view()).collect();
    c.bench_function("shape_global", |b| {
        b.iter(|| black_box(shape.call(&dims).unwrap()))
    });
}

criterion_group!(
    benches,
    calls,
    env_dtype_and_shape,
    registry_and_objects,
    strings_and_errors,
    tensors_and_containers
);
criterion_main!(benches);
