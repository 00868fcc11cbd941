//! The artifacts example: the C host `examples/artifacts_c/main.c` hands a
//! C kernel and its weights to tvm-ffi-rs through the typed C interface
//! (`tvm/ffi/extra/artifact.h`), loads and calls them, exports them as a
//! shared library and as Model Library Format, and reads both back.
//!
//! `cargo run --release --example artifacts_c`

#[path = "common/mod.rs"]
mod common;

use common::{build_cdylib, build_host, dirs};
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
    let status = Command::new(&host)
        .arg(&out)
        .status()
        .expect("run the host");
    std::process::exit(status.code().unwrap_or(1));
}
