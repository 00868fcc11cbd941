//! The artifacts example: the C host `examples/artifacts_c/main.c` hands a
//! C kernel and its weights to tvm-ffi-rs through the typed C interface
//! (`tvm/ffi/extra/artifact.h`), loads and calls them, exports them as a
//! shared library and as Model Library Format, inspects and reads both
//! back. `call_library.c` then loads the exported library and calls it
//! through the official C API only: on our library, and on the official one
//! when `TVM_FFI_OFFICIAL_DIR` names the official wheel's `tvm_ffi`
//! directory (its `include/` and `lib/`), as the test command does.
//!
//! `cargo run --release --example artifacts_c`

#[path = "common/mod.rs"]
mod common;

use common::{build_cdylib, build_host, dirs};
use std::path::Path;
use std::process::Command;

fn main() {
    let (root, lib_dir, out, include) = dirs();
    build_cdylib(&root, &lib_dir);
    std::fs::create_dir_all(&out).expect("create the output directory");
    let host = out.join("artifacts_host");
    build_host(
        &root.join("examples/artifacts_c/main.c"),
        &include,
        &lib_dir,
        &host,
    );
    run(Command::new(&host).arg(&out));
    let library = out.join("weighted.so");
    let caller = root.join("examples/artifacts_c/call_library.c");
    let ours = out.join("call_library");
    build_host(&caller, &include, &lib_dir, &ours);
    check_runtime(run(Command::new(&ours).arg(&library)), &lib_dir);
    if let Some(official) = std::env::var_os("TVM_FFI_OFFICIAL_DIR") {
        let official = Path::new(&official);
        let theirs = out.join("call_library_official");
        let official_lib = official.join("lib");
        build_host(&caller, &official.join("include"), &official_lib, &theirs);
        check_runtime(run(Command::new(&theirs).arg(&library)), &official_lib);
    }
}

/// Checks the host said it ran on the library in `dir`.
fn check_runtime(output: String, dir: &Path) {
    let dir = dir.canonicalize().expect("the library directory");
    let expected = format!("on {}/libtvm_ffi.so:", dir.display());
    assert!(
        output.starts_with(&expected),
        "expected the host to run on {}: {output}",
        dir.display()
    );
}

/// Runs a host and prints its output; its failure ends the example with the
/// same status. `cargo run` puts our library's directory on
/// LD_LIBRARY_PATH, which would win over a host's own run path: removed, so
/// each host runs on the library it was linked against.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .env_remove("LD_LIBRARY_PATH")
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run the host");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    print!("{text}");
    if !out.status.success() {
        std::process::exit(out.status.code().unwrap_or(1));
    }
    text
}
