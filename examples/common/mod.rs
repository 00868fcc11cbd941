//! What the C examples share: the C compiler, the cdylib the C host links,
//! and the directories.
#![allow(dead_code, reason = "each example uses a part")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the C compiler (as the `cc` crate finds it for this target).
pub fn cc(args: &[&dyn AsRef<std::ffi::OsStr>]) {
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
pub fn build_cdylib(root: &Path, lib_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // With the examples selected, dev-dependencies take part in feature
    // resolution as they do for `cargo run --example`: the library builds
    // with the same features, so neither build invalidates the other.
    cmd.current_dir(root).args(["build", "--lib", "--examples"]);
    // target/debug is the dev profile's; any other directory is named after
    // its profile (release, or the test command's `testing`).
    match lib_dir.file_name().and_then(|p| p.to_str()) {
        Some("debug") | None => {}
        Some(profile) => {
            cmd.args(["--profile", profile]);
        }
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

/// The crate root, the cdylib's directory (`target/<profile>`), the
/// examples' output directory and `include/`.
pub fn dirs() -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The example binary lives in target/<profile>/examples; the cdylib one up.
    let exe = std::env::current_exe().expect("current executable path");
    let lib_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf();
    let out = lib_dir.join("examples");
    let include = root.join("include");
    (root, lib_dir, out, include)
}

/// Builds a C host program against `include/` and `libtvm_ffi.so`.
pub fn build_host(source: &Path, include: &Path, lib_dir: &Path, output: &Path) {
    cc(&[
        &source,
        &"-I",
        &include,
        &"-L",
        &lib_dir,
        &format!("-Wl,-rpath,{}", lib_dir.display()),
        &"-ltvm_ffi",
        &"-o",
        &output,
    ]);
}
