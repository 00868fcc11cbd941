// Task 2: a global from a closure with mixed arguments, called by name; an error.
use tvm_ffi::{ensure, Function, Result, VALUE_ERROR};

fn main() -> Result<()> {
    let greet = Function::from_typed(
        |n: i64, who: tvm_ffi::String, loud: bool| -> Result<tvm_ffi::String> {
            ensure!(n >= 0, VALUE_ERROR, "n must be non-negative, got {}", n);
            let text = vec![format!("hi {}", who.as_str()); n as usize].join(" ");
            Ok(tvm_ffi::String::from(if loud {
                text.to_uppercase()
            } else {
                text
            }))
        },
    );
    Function::register_global("demo.greet", greet)?;
    let f = Function::get_global("demo.greet")?;
    let text: tvm_ffi::String = f
        .call_tuple((2i64, tvm_ffi::String::from("rust"), true))?
        .try_into()?;
    println!("{}", text.as_str());
    if let Err(err) = f.call_tuple((-1i64, tvm_ffi::String::from("rust"), false)) {
        println!("{}: {}", err.kind(), err.message());
    }
    Ok(())
}
