// Task 5: load a module (task 1's library) and call it.
use tvmffi::{Module, Result};
use tvmffi_host as _; // the runtime, linked into this program

fn main() -> Result<()> {
    let path = std::env::args().nth(1).expect("the library to load");
    let m = Module::load(&path)?;
    let y: i64 = m.function("add_one")?.call((41,))?;
    println!("add_one(41) = {y}");
    Ok(())
}
