// Task 3: an object type whose fields other languages see (repr, equality).
use tvm_ffi::derive::{Object, ObjectRef};
use tvm_ffi::{Any, Function, Object, ObjectArc, Result};

#[repr(C)]
#[derive(Object)]
#[type_key = "demo.Point"]
#[type_register]
struct PointObj {
    base: Object,
    x: i64,
    y: f64,
}

#[repr(C)]
#[derive(ObjectRef, Clone)]
struct Point {
    data: ObjectArc<PointObj>,
}

fn main() -> Result<()> {
    let make = |x, y| Point {
        data: ObjectArc::new(PointObj {
            base: Object::new(),
            x,
            y,
        }),
    };
    let (p, twin) = (make(1, 2.5), make(1, 2.5));
    let repr: tvm_ffi::String = Function::get_global("ffi.ReprPrint")?
        .call_tuple((p.clone(),))?
        .try_into()?;
    println!("{}", repr.as_str());
    match Function::get_global("ffi.StructuralEqual")?.call_tuple((
        Any::from(p),
        Any::from(twin),
        false,
        false,
    )) {
        Ok(equal) => println!("structurally equal: {}", bool::try_from(equal)?),
        Err(err) => println!("structural equality: {}: {}", err.kind(), err.message()),
    }
    Ok(())
}
