// Task 3: an object type whose fields other languages see (repr, equality).
use tvmffi::{Function, Object, ObjectRef, Result};
use tvmffi_host as _; // the runtime, linked into this program

#[derive(Object, Default)]
#[type_key = "demo.Point"]
struct Point {
    x: i64,
    y: f64,
}

fn main() -> Result<()> {
    let p = ObjectRef::new(Point { x: 1, y: 2.5 })?;
    let twin = ObjectRef::new(Point { x: 1, y: 2.5 })?;
    println!("{:?}", p.to_any());
    match Function::get_global("ffi.StructuralEqual")?.call::<_, bool>((p, twin, false, false)) {
        Ok(equal) => println!("structurally equal: {equal}"),
        Err(err) => println!("structural equality: {}: {}", err.kind(), err.message()),
    }
    Ok(())
}
