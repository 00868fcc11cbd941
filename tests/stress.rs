//! Eight threads at once through the C API, each for a bounded number of
//! rounds: registry set/get/call/remove (own names and one contended name),
//! reference counting of a shared object, error raise/fetch, stream
//! set/get, and module load/call/release. Every result is checked, and the
//! shared object's reference count is back where it started at the end.

mod common;

use std::ffi::CString;
use std::path::Path;
use std::sync::Barrier;
use tvm_ffi::abi::*;
use tvm_ffi::capi::*;
use tvm_ffi::runtime::{Any, Function};
use tvm_ffi::runtime::{TextKind, make_text};

const THREADS: usize = 8;
const ROUNDS: i64 = 2000;

fn bytes(s: &str) -> TVMFFIByteArray {
    TVMFFIByteArray {
        data: s.as_ptr().cast(),
        size: s.len(),
    }
}

/// A global looked up through the C API.
fn global(name: &str) -> Option<Function> {
    let mut out: TVMFFIObjectHandle = ::core::ptr::null_mut();
    assert_eq!(
        // SAFETY: a valid name and out slot.
        unsafe { TVMFFIFunctionGetGlobal(&bytes(name), &mut out) },
        0
    );
    let obj = ::core::ptr::NonNull::new(out.cast::<TVMFFIObject>())?;
    // SAFETY: GetGlobal hands us a new reference.
    Function::from_object(unsafe { tvm_ffi::runtime::ObjectRef::from_raw(obj) })
}

/// Calls `f` through `TVMFFIFunctionCall`, expecting an int.
fn call_int(f: &Function, args: &[TVMFFIAny]) -> i64 {
    let mut result = TVMFFIAny::NONE;
    let mut args = args.to_vec();
    // SAFETY: a live function, valid arguments, a writable result.
    let code = unsafe {
        TVMFFIFunctionCall(
            f.as_object().as_ptr().cast(),
            args.as_mut_ptr(),
            args.len() as i32,
            &mut result,
        )
    };
    assert_eq!(code, 0);
    assert_eq!(result.type_index, kTVMFFIInt);
    // SAFETY: an int result.
    unsafe { result.value.v_int64 }
}

fn int(v: i64) -> TVMFFIAny {
    *Any::from(v).view().raw()
}

/// Builds a small library exporting `__tvm_ffi_add`.
fn build_library(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join("add.c");
    std::fs::write(
        &src,
        "#include <tvm/ffi/c_api.h>\n\
         TVM_FFI_DLL_EXPORT int __tvm_ffi_add(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {\n\
         r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = a[0].v_int64 + a[1].v_int64; return 0; }\n",
    )
    .unwrap();
    let lib = dir.join("libstress_add.so");
    common::build_c_library(&src, &lib);
    lib
}

fn ref_count(obj: &tvm_ffi::runtime::ObjectRef) -> u64 {
    // SAFETY: a live object; the low 32 bits are the strong count.
    unsafe {
        (*obj.as_ptr())
            .combined_ref_count
            .load(std::sync::atomic::Ordering::SeqCst)
            & 0xffff_ffff
    }
}

#[test]
fn eight_threads_through_the_c_api() {
    let lib = build_library(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("stress"));
    let lib_path = CString::new(lib.to_str().unwrap()).unwrap();
    let shared = make_text(&[b'x'; 100], TextKind::Str);
    let shared_obj = shared.view().to_object().unwrap();
    let count_before = ref_count(&shared_obj);
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for t in 0..THREADS as i64 {
            let (barrier, lib_path, shared_obj) = (&barrier, &lib_path, &shared_obj);
            s.spawn(move || {
                barrier.wait();
                let load = global("ffi.ModuleLoadFromFile").unwrap();
                let get_function = global("ffi.ModuleGetFunction").unwrap();
                let remove = global("ffi.FunctionRemoveGlobal").unwrap();
                for k in 0..ROUNDS {
                    // Registry: an own name, then the contended one.
                    let name = format!("stress.t{t}.f{k}");
                    let value = t * ROUNDS + k;
                    let f = Function::from_closure(move |_| Ok(Any::from(value)));
                    // SAFETY: a valid name and function.
                    let code = unsafe {
                        TVMFFIFunctionSetGlobal(&bytes(&name), f.as_object().as_ptr().cast(), 0)
                    };
                    assert_eq!(code, 0);
                    // SAFETY: as above; overriding is allowed.
                    let code = unsafe {
                        TVMFFIFunctionSetGlobal(
                            &bytes("stress.shared"),
                            f.as_object().as_ptr().cast(),
                            1,
                        )
                    };
                    assert_eq!(code, 0);
                    assert_eq!(call_int(&global(&name).unwrap(), &[]), value);
                    let any = call_int(&global("stress.shared").unwrap(), &[]);
                    assert!((0..THREADS as i64 * ROUNDS).contains(&any), "{any}");
                    let n = make_text(name.as_bytes(), TextKind::Str);
                    let removed = remove.call(&[n.view()]).unwrap();
                    assert_eq!(removed.view().raw().type_index, kTVMFFIBool);
                    assert_eq!(removed.view().as_i64(), Some(1));
                    assert!(global(&name).is_none());

                    // Reference counting of a shared object.
                    let handle = shared_obj.as_ptr().cast();
                    for _ in 0..10 {
                        // SAFETY: a live object.
                        assert_eq!(unsafe { TVMFFIObjectIncRef(handle) }, 0);
                    }
                    for _ in 0..10 {
                        // SAFETY: releasing the references taken above.
                        assert_eq!(unsafe { TVMFFIObjectDecRef(handle) }, 0);
                    }

                    // Errors are per thread.
                    let message = CString::new(format!("t{t} round {k}")).unwrap();
                    // SAFETY: NUL-terminated strings.
                    unsafe {
                        TVMFFIErrorSetRaisedFromCStr(c"ValueError".as_ptr(), message.as_ptr())
                    };
                    let mut err: TVMFFIObjectHandle = ::core::ptr::null_mut();
                    // SAFETY: a writable slot.
                    unsafe { TVMFFIErrorMoveFromRaised(&mut err) };
                    let err =
                        ::core::ptr::NonNull::new(err.cast::<TVMFFIObject>()).expect("raised");
                    // SAFETY: MoveFromRaised hands over a reference.
                    let err = unsafe { tvm_ffi::runtime::ObjectRef::from_raw(err) };
                    let cell = tvm_ffi::runtime::error_cell(&err).unwrap();
                    // SAFETY: the cell describes the error's own storage.
                    let got = unsafe { tvm_ffi::runtime::byte_slice(cell.message) };
                    assert_eq!(got, message.as_bytes());

                    // Streams are per thread.
                    let stream = (t * 1000 + k + 1) as usize as *mut ::core::ffi::c_void;
                    assert_eq!(
                        // SAFETY: NULL out-pointer allowed.
                        unsafe { TVMFFIEnvSetStream(2, t as i32, stream, ::core::ptr::null_mut()) },
                        0
                    );
                    assert_eq!(TVMFFIEnvGetStream(2, t as i32), stream);

                    // Module load, call, release.
                    let path = make_text(lib_path.as_bytes(), TextKind::Str);
                    let module = load.call(&[path.view()]).unwrap();
                    let fname = make_text(b"add", TextKind::Str);
                    let add = get_function
                        .call(&[module.view(), fname.view(), Any::from(false).view()])
                        .unwrap();
                    let add = Function::from_object(add.view().to_object().unwrap()).unwrap();
                    assert_eq!(call_int(&add, &[int(t), int(k)]), t + k);
                }
            });
        }
    });
    assert_eq!(ref_count(&shared_obj), count_before);
}
