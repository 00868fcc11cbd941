//! The main example, end to end:
//! 1. compile the C kernel `examples/add_one_c/kernel.c` to an object file;
//! 2. write the `__tvm_ffi__library_bin` module tree with tvm-ffi-rs's writer
//!    and link it with the kernel into `libadd_one.so` (system C compiler);
//! 3. build the C host `examples/add_one_c/main.c` against `include/` and
//!    `libtvm_ffi.so`, and run it: it loads the library through the C API
//!    and calls the kernel.
//!
//! `cargo run --release --example add_one_c`

#[path = "common/mod.rs"]
mod common;

use common::{build_cdylib, build_host, cc, dirs};
use std::process::Command;
use tvm_ffi::module::emit::build_shared_library;
use tvm_ffi::module::inspect::inspect;
use tvm_ffi::module::library_bin::{LIB_KIND, LibraryBin, ModuleEntry, write};

fn main() {
    let (root, lib_dir, out, include) = dirs();
    build_cdylib(&root, &lib_dir);

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
    build_host(
        &root.join("examples/add_one_c/main.c"),
        &include,
        &lib_dir,
        &host,
    );
    let status = Command::new(&host)
        .arg(&kernel_so)
        .status()
        .expect("run the host");
    std::process::exit(status.code().unwrap_or(1));
}
