//! Builds `examples/add_one_c/main.c` against `include/` and the
//! `libtvm_ffi.so` cargo just built, then runs it.
//!
//! `cargo run --release --example add_one_c`

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The example binary lives in target/<profile>/examples; the cdylib one up.
    let exe = std::env::current_exe().expect("current executable path");
    let lib_dir = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target/<profile>")
        .to_path_buf();
    assert!(
        lib_dir.join("libtvm_ffi.so").exists(),
        "{} has no libtvm_ffi.so: build the library first",
        lib_dir.display()
    );
    let out = lib_dir.join("examples").join("add_one_c_demo");
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .target(env!("TARGET_TRIPLE"))
        .host(env!("TARGET_TRIPLE"))
        .opt_level(2)
        .get_compiler();
    let status = compiler
        .to_command()
        .arg(root.join("examples/add_one_c/main.c"))
        .arg("-I")
        .arg(root.join("include"))
        .arg("-L")
        .arg(&lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-ltvm_ffi")
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling the C example failed");
    let status = Command::new(&out).status().expect("run the example");
    std::process::exit(status.code().unwrap_or(1));
}
