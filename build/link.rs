//! Steps 2 and 3: the link of the cdylib (the soname,
//! `-Bsymbolic-functions`, the C++ symbols to export, the install name on
//! macOS, no DWARF in a Windows release DLL) and the link shim
//! (`scripts/build/link-shim.sh`), put first on the compiler driver's
//! program path: GNU ld and gold take one anonymous version script and
//! rustc passes its own beside ours; the shim merges them (lld and mold
//! need nothing, the shim passes through). `cargo:rustc-cdylib-link-arg`
//! reaches this package's cdylib link alone, which only a build script can
//! ask for.

use crate::exports::{Exports, macos_export_list, version_script};
use std::path::{Path, PathBuf};

/// The link arguments of the cdylib built for `target_os`.
pub fn cdylib_args(root: &Path, target_os: &str, exports: &Exports) {
    if target_os == "linux" {
        // Consumers record `NEEDED libtvm_ffi.so`, as for the official library.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtvm_ffi.so");
        // Calls inside the library bind to our own definitions, so loading it
        // beside another libtvm_ffi.so in one process cannot cross-wire them.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
        // The C++ symbols of the official library (rustc's own version
        // script exports only the C functions).
        let script = version_script(exports);
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
            script.display()
        );
        // Two version scripts are fine for lld; GNU ld and gold take one
        // anonymous script only. The shim, found first on the compiler
        // driver's program path under every linker's name, merges them.
        let shim = install_link_shim(root);
        println!("cargo:rustc-cdylib-link-arg=-B{}/", shim.display());
    }
    if target_os == "windows" && std::env::var("PROFILE").as_deref() == Ok("release") {
        // No Windows tool reads DWARF: a release DLL carries its COFF symbol
        // table (function names for backtraces) and leaves the DWARF out,
        // some 17 MB of the 20 MB DLL.
        println!("cargo:rustc-cdylib-link-arg=-Wl,--strip-debug");
    }
    if target_os == "macos" {
        // Found through the loader's run paths, as the official dylib is.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libtvm_ffi.dylib");
        // The same C++ symbols as on Linux, in Mach-O's spelling; ld64
        // exports the union of rustc's list and this one.
        let list = macos_export_list(exports);
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,-exported_symbols_list,{}",
            list.display()
        );
    }
}

/// Installs `scripts/build/link-shim.sh` into OUT_DIR as `ld`, `ld.bfd`, `ld.gold`,
/// `ld.lld` and `ld.mold`; returns that directory.
#[cfg(unix)]
fn install_link_shim(root: &Path) -> PathBuf {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("link-shim");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/link-shim");
    let shim = dir.join("link-shim");
    let source = root.join("scripts/build/link-shim.sh");
    println!("cargo:rerun-if-changed={}", source.display());
    std::fs::copy(&source, &shim).expect("copy scripts/build/link-shim.sh");
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755))
        .expect("make the shim executable");
    for name in ["ld", "ld.bfd", "ld.gold", "ld.lld", "ld.mold"] {
        symlink("link-shim", dir.join(name)).expect("link the shim");
    }
    dir
}

/// The shim is a shell script found through symbolic links: a Linux
/// library is linked on a Unix build host (this script still compiles
/// elsewhere, which the fast tier checks for Windows hosts).
#[cfg(not(unix))]
fn install_link_shim(_root: &Path) -> PathBuf {
    panic!("linking the Linux library needs a Unix build host (scripts/build/link-shim.sh)")
}
