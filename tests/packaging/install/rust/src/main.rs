//! Calls through the official `tvm-ffi` crate and says which libtvm_ffi the
//! process mapped (the first argument is the expected file).
use tvm_ffi::{Function, Result};

fn main() {
    let expected = std::env::args().nth(1).expect("the expected library path");
    let add = Function::from_typed(|x: i64, y: i64| -> Result<i64> { Ok(x + y) });
    let sum: i64 = add.call_tuple((40i64, 2i64)).unwrap().try_into().unwrap();
    let lister = Function::get_global("ffi.FunctionListGlobalNamesFunctor");
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut mapped: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.find('/').map(|at| &l[at..]))
        .filter(|p| p.ends_with("/libtvm_ffi.so"))
        .collect();
    mapped.dedup();
    println!(
        "add(40, 2) = {sum} through tvm_ffi::Function; global found: {}; libtvm_ffi mapped: {}",
        lister.is_ok(),
        mapped.join(", ")
    );
    assert!(sum == 42 && lister.is_ok() && mapped == [expected.as_str()]);
}
