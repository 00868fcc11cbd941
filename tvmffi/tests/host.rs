//! tvmffi in host mode (`cargo test -p tvmffi --features host`): conversions
//! at their edges, argument errors, and that every object and closure
//! handed to the runtime is released exactly once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tvmffi::{Any, Bytes, DataType, Device, Function, Object, ObjectRef, Result, Tensor, Writable};

fn echo() -> Function {
    Function::from_typed("test.echo", |v: Any| v).expect("echo")
}

#[test]
fn scalars_strings_and_options_round_trip() -> Result<()> {
    let f = echo();
    assert_eq!(f.call::<_, i64>((i64::MIN,))?, i64::MIN);
    assert_eq!(f.call::<_, u8>((255,))?, 255);
    assert!(f.call::<_, u8>((256,)).is_err(), "256 is no u8");
    assert!(f.call::<_, u64>((-1,)).is_err(), "-1 is no u64");
    assert_eq!(f.call::<_, f64>((7,))?, 7.0, "an int converts to float");
    assert!(f.call::<_, bool>((true,))?);
    let long = "x".repeat(1000);
    assert_eq!(f.call::<_, String>((long.as_str(),))?, long);
    assert_eq!(f.call::<_, String>(("héllo",))?, "héllo");
    assert_eq!(
        f.call::<_, Bytes>((Bytes(vec![0, 255, 7]),))?,
        Bytes(vec![0, 255, 7])
    );
    assert!(
        f.call::<_, String>((Bytes(vec![0xff]),)).is_err(),
        "bytes are not a str"
    );
    assert_eq!(f.call::<_, Option<i64>>((None::<i64>,))?, None);
    assert_eq!(f.call::<_, Option<i64>>((Some(3),))?, Some(3));
    assert!(
        f.call::<_, u64>((i64::MAX as u64 + 1,)).is_err(),
        "u64 above i64::MAX does not fit"
    );
    Ok(())
}

#[test]
fn containers_round_trip_and_refuse_wrong_elements() -> Result<()> {
    let f = echo();
    let v = vec!["a".to_owned(), "bb".to_owned()];
    assert_eq!(f.call::<_, Vec<String>>((v.clone(),))?, v);
    assert!(f.call::<_, Vec<i64>>((v,)).is_err());
    assert_eq!(
        f.call::<_, Vec<i64>>((Vec::<i64>::new(),))?,
        Vec::<i64>::new()
    );
    let m: HashMap<String, i64> = [("x".to_owned(), 1), ("y".to_owned(), 2)].into();
    assert_eq!(f.call::<_, HashMap<String, i64>>((m.clone(),))?, m);
    assert_eq!(
        f.call::<_, HashMap<String, i64>>((HashMap::<String, i64>::new(),))?,
        HashMap::new()
    );
    assert!(f.call::<_, HashMap<String, String>>((m,)).is_err());
    Ok(())
}

#[test]
fn argument_errors_name_the_function_the_argument_and_the_types() -> Result<()> {
    let f = Function::from_typed("test.pair", |a: i64, b: String| format!("{a}{b}"))?;
    let err = f.call::<_, String>((1,)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched number of arguments when calling: `test.pair(0: int, 1: str) -> str`. Expected 2 but got 1 arguments"
    );
    let err = f.call::<_, String>((1, 2.5)).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched type on argument #1 when calling: `test.pair(0: int, 1: str) -> str`. Expected `str` but got `float`"
    );
    let err = f.call::<_, i64>((1, "x")).unwrap_err();
    assert_eq!(
        err.message(),
        "the call returned `ffi.SmallStr`, which does not convert to `int`"
    );
    Ok(())
}

#[test]
fn closures_may_borrow_their_arguments() -> Result<()> {
    let f = tvmffi::function!("test.borrow", |s: &str,
                                              x: tvmffi::Slice<f32>|
     -> Result<String> {
        Ok(format!("{s}:{}", x.iter().sum::<f32>()))
    })?;
    let t = Tensor::from_vec(vec![1.0f32, 2.5], &[2])?;
    assert_eq!(f.call::<_, String>(("sum", t.clone()))?, "sum:3.5");
    let err = f.call::<_, String>(("sum",)).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched number of arguments when calling: \
         `test.borrow(0: str, 1: Tensor<float32, cpu, contiguous>) -> str`. Expected 2 but got 1 arguments"
    );
    let ints = Tensor::from_vec(vec![1i64], &[1])?;
    let err = f.call::<_, String>(("sum", ints)).unwrap_err();
    assert!(
        err.message().ends_with("but got `a tensor of int64`"),
        "{}",
        err.message()
    );
    Ok(())
}

#[test]
fn panics_become_runtime_errors() -> Result<()> {
    let f = Function::from_typed("test.panics", |msg: String| -> i64 { panic!("{msg}") })?;
    let err = f.call::<_, i64>(("boom",)).unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        ("RuntimeError", "panic in `test.panics`: boom")
    );
    assert_eq!(
        f.call::<_, i64>((1,)).unwrap_err().kind(),
        "TypeError",
        "still callable"
    );
    Ok(())
}

#[test]
fn errors_keep_kind_message_backtrace_and_cause() -> Result<()> {
    let f = Function::from_typed("test.fails", |n: i64| -> Result<i64> {
        let inner = tvmffi::Error::new("KeyError", "no such key");
        Err(tvmffi::Error::value_error(format!("lookup {n} failed"))
            .with_cause(inner)
            .at(file!(), line!(), "fails"))
    })?;
    let err = f.call::<_, i64>((5,)).unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        ("ValueError", "lookup 5 failed")
    );
    assert!(
        err.backtrace().contains("tests/host.rs"),
        "{}",
        err.backtrace()
    );
    let cause = err.cause().expect("the cause crosses the boundary");
    assert_eq!((cause.kind(), cause.message()), ("KeyError", "no such key"));
    Ok(())
}

#[test]
fn closures_are_released_with_their_function() -> Result<()> {
    let token = Arc::new(());
    let held = Arc::clone(&token);
    let f = Function::from_typed("test.holds", move || Arc::strong_count(&held) as i64)?;
    assert_eq!(f.call::<_, i64>(())?, 2);
    let copy = f.clone();
    drop(f);
    assert_eq!(Arc::strong_count(&token), 2, "a clone keeps it");
    drop(copy);
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the closure was dropped with the last reference"
    );
    Ok(())
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

#[derive(Default)]
struct Tracked;

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Object, Default)]
#[type_key = "tvmffi_test.Node"]
struct Node {
    name: String,
    #[field(default = 7)]
    weight: i64,
    count: Writable<i64>,
    #[field(skip)]
    _tracked: Tracked,
}

#[test]
fn objects_are_reflected_and_dropped_once() -> Result<()> {
    let before = DROPS.load(Ordering::SeqCst);
    let node = ObjectRef::new(Node {
        name: "n".into(),
        weight: 1,
        count: Writable::new(2),
        _tracked: Tracked,
    })?;
    let any = node.to_any();
    assert_eq!(any.type_key(), "tvmffi_test.Node");
    assert_eq!(
        format!("{any:?}"),
        r#"tvmffi_test.Node(name="n", weight=1, count=2)"#
    );
    let back: ObjectRef<Node> = echo().call((any,))?;
    assert!(back.same_as(&node));
    drop((node, back));
    assert_eq!(
        DROPS.load(Ordering::SeqCst),
        before + 1,
        "dropped once, when the last reference went"
    );
    let err = echo()
        .call::<_, ObjectRef<Node>>((3,))
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.message().contains("tvmffi_test.Node"),
        "{}",
        err.message()
    );
    Ok(())
}

#[test]
fn tensors_check_shape_dtype_and_size() -> Result<()> {
    let err = Tensor::from_vec(vec![1.0f32; 5], &[2, 3]).unwrap_err();
    assert_eq!(
        err.message(),
        "Tensor::from_vec: shape [2, 3] holds 6 elements, the data 5"
    );
    let err = Tensor::from_vec(Vec::<f32>::new(), &[-1]).unwrap_err();
    assert!(
        err.message().contains("negative or too many"),
        "{}",
        err.message()
    );
    let err = Tensor::empty(
        &[i64::MAX, i64::MAX],
        DataType::parse("float32")?,
        Device::CPU,
    )
    .unwrap_err();
    assert!(
        err.message().contains("invalid shape") || err.message().contains("too large"),
        "{}",
        err.message()
    );
    let err =
        Tensor::empty(&[2], DataType::parse("float32")?, Device { kind: 2, id: 0 }).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    let empty = Tensor::from_vec(Vec::<i64>::new(), &[0, 3])?;
    assert_eq!(empty.as_slice::<i64>()?, &[] as &[i64]);
    let t = Tensor::from_vec(vec![1i32, 2, 3], &[3])?;
    assert_eq!(t.as_slice::<i32>()?, &[1, 2, 3]);
    assert!(t.as_slice::<u32>().is_err(), "int32 is not uint32");
    Ok(())
}

#[test]
fn tensors_round_trip_through_dlpack_and_release_their_buffer() -> Result<()> {
    let data: Vec<f64> = (0..1000).map(f64::from).collect();
    let t = Tensor::from_vec(data, &[10, 100])?;
    let guard = t.to_dlpack()?;
    drop(t);
    let back = Tensor::from_dlpack(guard)?;
    assert_eq!(back.shape(), &[10, 100]);
    assert_eq!(back.as_slice::<f64>()?[999], 999.0);
    assert_eq!(format!("{:?}", back.dtype()), "float64");
    Ok(())
}

#[test]
fn sys_mirrors_the_runtime_abi() {
    use core::mem::size_of;
    use tvm_ffi_runtime::abi;
    use tvmffi::sys;
    let indices = [
        (sys::ANY, abi::kTVMFFIAny),
        (sys::NONE, abi::kTVMFFINone),
        (sys::INT, abi::kTVMFFIInt),
        (sys::BOOL, abi::kTVMFFIBool),
        (sys::FLOAT, abi::kTVMFFIFloat),
        (sys::DLTENSOR_PTR, abi::kTVMFFIDLTensorPtr),
        (sys::RAW_STR, abi::kTVMFFIRawStr),
        (sys::BYTE_ARRAY_PTR, abi::kTVMFFIByteArrayPtr),
        (sys::SMALL_STR, abi::kTVMFFISmallStr),
        (sys::SMALL_BYTES, abi::kTVMFFISmallBytes),
        (sys::OBJECT_BEGIN, abi::kTVMFFIStaticObjectBegin),
        (sys::OBJECT, abi::kTVMFFIObject),
        (sys::STR, abi::kTVMFFIStr),
        (sys::BYTES, abi::kTVMFFIBytes),
        (sys::FUNCTION, abi::kTVMFFIFunction),
        (sys::TENSOR, abi::kTVMFFITensor),
        (sys::ARRAY, abi::kTVMFFIArray),
        (sys::MAP, abi::kTVMFFIMap),
        (sys::MODULE, abi::kTVMFFIModule),
    ];
    for (ours, runtime) in indices {
        assert_eq!(ours, runtime);
    }
    assert_eq!(
        sys::DELETE_STRONG,
        abi::kTVMFFIObjectDeleterFlagBitMaskStrong
    );
    assert_eq!(sys::DELETE_WEAK, abi::kTVMFFIObjectDeleterFlagBitMaskWeak);
    assert_eq!(
        sys::FIELD_WRITABLE,
        i64::from(abi::kTVMFFIFieldFlagBitMaskWritable)
    );
    assert_eq!(
        sys::FIELD_HAS_DEFAULT,
        i64::from(abi::kTVMFFIFieldFlagBitMaskHasDefault)
    );
    assert_eq!(sys::SEQ_HASH_TREE_NODE, abi::kTVMFFISEqHashKindTreeNode);
    assert_eq!(size_of::<sys::RawAny>(), size_of::<abi::TVMFFIAny>());
    assert_eq!(
        size_of::<sys::ObjectHeader>(),
        size_of::<abi::TVMFFIObject>()
    );
    assert_eq!(
        size_of::<sys::ErrorCell>(),
        size_of::<abi::TVMFFIErrorCell>()
    );
    assert_eq!(size_of::<sys::SeqCell>(), size_of::<abi::TVMFFISeqCell>());
    assert_eq!(
        size_of::<sys::FieldInfo>(),
        size_of::<abi::TVMFFIFieldInfo>()
    );
    assert_eq!(
        size_of::<sys::TypeMetadata>(),
        size_of::<abi::TVMFFITypeMetadata>()
    );
}
