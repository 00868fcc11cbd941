// Task 5: load a module (task 1's library) and call it.
use tvm_ffi::{Module, Result};

fn main() -> Result<()> {
    let path = std::env::args().nth(1).expect("the library to load");
    let m = Module::load_from_file(&path)?;
    let y: i64 = m
        .get_function("add_one")?
        .call_tuple((41i64,))?
        .try_into()?;
    println!("add_one(41) = {}", y);
    Ok(())
}
