//! Loads, into one Rust host: a C++ extension built with the official
//! headers (the official wheel's `libtvm_ffi_testing.so`), an extension
//! built with the official Rust crate and one built with `tvmffi` (each
//! exporting `add_one` and `scale`); calls cross between them. Prints one
//! line per step, and which `libtvm_ffi.so` files the process mapped.
//! Usage: `rust-mixed-host CXX_EXT OFFICIAL_CRATE_EXT TVMFFI_EXT`.

use tvmffi::{Function, Module, Result, Tensor};
use tvmffi_host as _; // the runtime, linked into this program

fn main() -> Result<()> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let [cxx, official, ours] = &paths[..] else {
        panic!("usage: rust-mixed-host CXX_EXT OFFICIAL_CRATE_EXT TVMFFI_EXT");
    };
    // The C++ library registers its globals when it loads.
    Module::load(cxx)?;
    let apply = Function::get_global("testing.apply")?;
    let official = Module::load(official)?;
    let ours = Module::load(ours)?;

    // C++ calls the official crate's function, then tvmffi's.
    let a: i64 = apply.call((official.function("add_one")?, 40))?;
    let b: i64 = apply.call((ours.function("add_one")?, a))?;
    println!("C++ apply(official add_one, 40) = {a}; C++ apply(tvmffi add_one, {a}) = {b}");

    // A tensor made here, scaled by one extension, then by the other.
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    let y: Tensor = official.function("scale")?.call((x, 2.0))?;
    let z: Tensor = ours.function("scale")?.call((y, 10.0))?;
    println!(
        "tvmffi scale(official scale([1, 2, 3], 2), 10) = {:?}",
        z.as_slice::<f32>()?
    );

    // A tvmffi function called by C++, given a tensor from the official crate.
    let w: Tensor = apply.call((
        ours.function("scale")?,
        official.function("scale")?.call::<_, Tensor>((z, 0.5))?,
        0.1,
    ))?;
    println!(
        "C++ apply(tvmffi scale, official scale(.., 0.5), 0.1) = {:?}",
        w.as_slice::<f32>()?
    );

    // An error raised in C++ reaches Rust with its kind and message.
    let raise = Function::get_global("testing.test_raise_error")?;
    let err = raise
        .call::<_, ()>(("ValueError", "raised in C++"))
        .unwrap_err();
    println!("C++ raised {}: {}", err.kind(), err.message());
    // And one raised in the official crate's extension.
    let err = official
        .function("add_one")?
        .call::<_, i64>(("not an int",))
        .unwrap_err();
    println!("official crate raised {}", err.kind());

    // Which libtvm_ffi.so files are mapped: only the runtime's stub, a
    // memory file (no file on the loader path).
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut files: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|f| f.ends_with("libtvm_ffi.so"))
        .collect();
    files.dedup();
    println!("libtvm_ffi.so files mapped: {files:?}");
    Ok(())
}
