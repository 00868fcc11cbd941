//! The program loads extension libraries that call the runtime linked into
//! it: export the runtime's C functions from the executable so they bind.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic");
    }
}
