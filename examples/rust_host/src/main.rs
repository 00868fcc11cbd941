//! Hosting TVM-FFI from Rust with tvmffi: a global function made from a
//! closure, an object type with reflected fields, a tensor handed out
//! through DLPack, and a module loaded and called. Usage:
//! `rust-host-example [path/to/librust_ext.so]`.

use tvmffi::{Any, Error, Function, Module, Object, ObjectRef, Result, Tensor, Writable, ensure};
use tvmffi_host as _; // the runtime, linked into this program

/// An object type defined by the host.
#[derive(Object, Default, Debug)]
#[type_key = "rust_host.Counter"]
struct Counter {
    /// What is counted.
    name: String,
    /// How many, changeable from any language.
    #[field(default = 0)]
    count: Writable<i64>,
}

fn global_from_closure() -> Result<()> {
    // `function!` lets a closure borrow its arguments (`who: &str`).
    let greet = tvmffi::function!("host.greet", |n: i64,
                                                 who: &str,
                                                 loud: bool|
     -> Result<String> {
        ensure!(n >= 0, ValueError, "n must be non-negative, got {n}");
        let text = vec![format!("hi {who}"); n as usize].join(", ");
        Ok(if loud { text.to_uppercase() } else { text })
    })?;
    greet.register_global("host.greet", false)?;

    let found = Function::get_global("host.greet")?;
    let text: String = found.call((2, "rust", true))?;
    println!("host.greet(2, 'rust', True) = {text:?}");
    for err in [
        found.call::<_, String>((-1, "rust", false)),
        found.call::<_, String>(("x", "rust", false)),
    ] {
        let err: Error = err.expect_err("both calls fail");
        let at_line = err.backtrace().contains("rust_host/src/main.rs");
        println!(
            "error kind {}: {} (backtrace names main.rs: {at_line})",
            err.kind(),
            err.message()
        );
    }
    Ok(())
}

fn object_with_fields() -> Result<()> {
    let c = ObjectRef::new(Counter {
        name: "apples".into(),
        count: Writable::new(3),
    })?;
    let same = ObjectRef::new(Counter {
        name: "apples".into(),
        count: Writable::new(3),
    })?;
    println!("repr: {:?}", c.to_any());
    let equal: bool =
        Function::get_global("ffi.StructuralEqual")?.call((c.clone(), same, false, false))?;
    println!("structurally equal to a twin: {equal}");
    let json: String =
        Function::get_global("ffi.ToJSONGraphString")?.call((c.clone(), Any::none()))?;
    println!("JSON graph: {json}");
    let back: ObjectRef<Counter> =
        Function::get_global("ffi.FromJSONGraphString")?.call((json,))?;
    println!(
        "read back: name {:?}, count {}",
        back.name,
        back.count.get()
    );
    c.count.set(4);
    println!("after set: {:?}", c.to_any());
    Ok(())
}

fn tensor_through_dlpack() -> Result<()> {
    let t = Tensor::from_vec(
        (0..6).map(|i| i as f32 * 0.5).collect::<Vec<f32>>(),
        &[2, 3],
    )?;
    println!("tensor: {t:?}, elements {:?}", t.as_slice::<f32>()?);
    let wrong = t
        .as_slice::<i32>()
        .map(|_| ())
        .expect_err("float32, not int32");
    println!("as int32: {wrong}");
    let guard = t.to_dlpack()?;
    let view = guard
        .validate()
        .map_err(|e| Error::value_error(e.to_string()))?;
    println!(
        "DLPack out: shape {:?}, dtype bits {}, device type {}",
        view.shape(),
        view.dtype().bits,
        view.device().device_type.0
    );
    let back = Tensor::from_dlpack(guard)?;
    println!(
        "back in: {back:?}, first element {}",
        back.as_slice::<f32>()?[1]
    );
    let zeros = Tensor::empty(&[4], tvmffi::DataType::parse("int16")?, tvmffi::Device::CPU)?;
    println!("empty: {zeros:?}, elements {:?}", zeros.as_slice::<i16>()?);
    Ok(())
}

fn load_and_call(path: &str) -> Result<()> {
    let m = Module::load(path)?;
    let y: i64 = m.function("add_one")?.call((41,))?;
    println!("add_one(41) = {y}; doc {:?}", m.function_doc("add_one")?);
    let point = m
        .function("make_point")?
        .call::<_, Any>((1, 2.5, "from the host"))?;
    println!("make_point: {point:?}");
    let err = m.function("fail")?.call::<_, ()>((3,)).expect_err("fails");
    println!("fail(3): {err}");
    let missing = m
        .function("no_such_function")
        .map(|_| ())
        .expect_err("missing");
    println!("missing: {missing}");
    Ok(())
}

fn main() -> Result<()> {
    global_from_closure()?;
    object_with_fields()?;
    tensor_through_dlpack()?;
    if let Some(path) = std::env::args().nth(1) {
        load_and_call(&path)?;
    }
    Ok(())
}
