//! A function made with the official crate, called through tvmffi, and the
//! other way round: one process, one runtime, two crates.

fn main() -> tvmffi::Result<()> {
    let official = tvm_ffi::Function::from_typed(|x: i64| -> tvm_ffi::Result<i64> { Ok(x * 2) });
    tvm_ffi::Function::register_global("both.double", official).expect("register");
    let doubled: i64 = tvmffi::Function::get_global("both.double")?.call((21,))?;

    let ours = tvmffi::Function::from_typed("both.greet", |who: String| format!("hello {who}"))?;
    ours.register_global("both.greet", false)?;
    let greet = tvm_ffi::Function::get_global("both.greet").expect("found");
    let text: tvm_ffi::String = greet
        .call_tuple((tvm_ffi::String::from("official"),))
        .and_then(|v| v.try_into())
        .expect("called");
    println!(
        "both.double(21) = {doubled}; both.greet = {}",
        text.as_str()
    );
    Ok(())
}
