// Task 5 loads a library that calls the runtime linked into the program.
fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic");
}
