//! The main example, end to end:
//! 1. compile the C kernel `examples/add_one_c/kernel.c` to an object file;
//! 2. write the `__tvm_ffi__library_bin` module tree with tvm-ffi-rs's writer
//!    and link it with the kernel into `libadd_one.so` (system C compiler);
//! 3. build the C host `examples/add_one_c/main.c` against `include/` and
//!    `libtvm_ffi.so`, and run it: it loads the library through the C API
//!    and calls the kernel.
//!
//! `cargo run --release --example add_one_c`

use std::path::{Path, PathBuf};
use std::process::Command;
use tvm_ffi::module::emit::build_shared_library;
use tvm_ffi::module::inspect::inspect;
use tvm_ffi::module::library_bin::{LIB_KIND, LibraryBin, ModuleEntry, write};

/// Runs the C compiler (as the `cc` crate finds it for this target).
fn cc(args: &[&dyn AsRef<std::ffi::OsStr>]) {
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .target(env!("TARGET_TRIPLE"))
        .host(env!("TARGET_TRIPLE"))
        .opt_level(2)
        .get_compiler();
    let mut cmd = compiler.to_command();
    for a in args {
        cmd.arg(a);
    }
    assert!(
        cmd.status().expect("run the C compiler").success(),
        "C compilation failed"
    );
}

/// Building an example does not build the crate's cdylib, which the C host
/// links: build it (for the example's own profile) through the cargo that
/// runs us, so that `cargo run --example add_one_c` works on a fresh clone.
fn build_cdylib(root: &Path, lib_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args(["build", "--lib"]);
    if lib_dir.file_name().is_some_and(|p| p == "release") {
        cmd.arg("--release");
    }
    // Into the same target directory as this example.
    if let Some(target_dir) = lib_dir.parent() {
        cmd.arg("--target-dir").arg(target_dir);
    }
    assert!(
        cmd.status().expect("run cargo build --lib").success(),
        "building libtvm_ffi.so failed"
    );
    assert!(
        lib_dir.join("libtvm_ffi.so").exists(),
        "{} has no libtvm_ffi.so",
        lib_dir.display()
    );
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The example binary lives in target/<profile>/examples; the cdylib one up.
    let exe = std::env::current_exe().expect("current executable path");
    let lib_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf();
    build_cdylib(&root, &lib_dir);
    let out = lib_dir.join("examples");
    let include = root.join("include");

    // 1. The kernel, as a compiler would emit it.
    let kernel_o = out.join("add_one_kernel.o");
    cc(&[
        &"-fPIC",
        &"-c",
        &root.join("examples/add_one_c/kernel.c"),
        &"-I",
        &include,
        &"-o",
        &kernel_o,
    ]);

    // 2. The module tree (here just the library itself) and the library.
    let blob = write(&LibraryBin {
        modules: vec![ModuleEntry {
            kind: LIB_KIND,
            payload: None,
        }],
        imports: vec![vec![]],
    })
    .expect("a valid tree");
    let kernel_so = out.join("libadd_one.so");
    build_shared_library(&blob, &[&kernel_o], &kernel_so).expect("link the kernel library");
    let found = inspect(&std::fs::read(&kernel_so).unwrap()).expect("inspect the library");
    println!(
        "built {}: functions {:?}, embedded tree of {} module(s)",
        kernel_so.display(),
        found.functions,
        found.library_bin.map_or(0, |m| m.len())
    );

    // 3. The host, through the C API.
    let host = out.join("add_one_host");
    cc(&[
        &root.join("examples/add_one_c/main.c"),
        &"-I",
        &include,
        &"-L",
        &lib_dir,
        &format!("-Wl,-rpath,{}", lib_dir.display()),
        &"-ltvm_ffi",
        &"-o",
        &host,
    ]);
    let status = Command::new(&host)
        .arg(&kernel_so)
        .status()
        .expect("run the host");
    std::process::exit(status.code().unwrap_or(1));
}
