//! docs/rust.md's rlib snippet: a Rust closure registered as a global (any
//! language calls it by name), then looked up and called as C or Python
//! would.

use tvm_ffi::runtime::registry::{self, Registration};
use tvm_ffi::runtime::{Any, Error, Function, Result};

fn main() -> Result<()> {
    let add = Function::from_closure(|args| {
        args.expect_len("demo.add", 2)?;
        let (a, b) = (args.get(0).as_i64(), args.get(1).as_i64());
        match (a, b) {
            (Some(a), Some(b)) => Ok(Any::from(a + b)),
            _ => Err(Error::type_error("demo.add takes two ints")),
        }
    });
    registry::set_global(b"demo.add", add, b"", false, Registration::Function)?;

    let f = registry::get_global(b"demo.add").expect("registered above");
    let sum = f.call(&[Any::from(40i64).view(), Any::from(2i64).view()])?;
    println!("demo.add(40, 2) = {}", sum.view().as_i64().unwrap_or_default());
    let err = f.call(&[Any::from(1.5).view(), Any::from(2i64).view()]).unwrap_err();
    println!("demo.add(1.5, 2): {err}");
    Ok(())
}
