//! Step 1: the C++ layer (`src/cxx`), compiled for the target and linked
//! whole into every crate type: in the Itanium ABI with the `cc` crate, or
//! for Windows in MSVC's ABI by a clang driver, whose `/EXPORT:` directives
//! are respelled for mingw's linker (GNU ld reads only `-export:`), so the
//! DLL exports what the sources mark `dllexport`. Only a build script
//! compiles for the target being built and hands rustc the archive.

use std::path::{Path, PathBuf};

/// The C++ layer, built in the Itanium ABI by the target's C++ compiler.
pub fn compile_layer(root: &Path, target_os: &str) {
    let root = root.display();
    let mut cxx = cc::Build::new();
    if target_os == "linux" {
        // ELF lets another object interpose an exported function; calls
        // inside the layer need not allow for it (Mach-O and PE never do).
        cxx.flag_if_supported("-fno-semantic-interposition");
    }
    let compiled = cxx
        .cpp(true)
        .std("c++17")
        .include(format!("{root}/include"))
        .files(LAYER.iter().map(|file| format!("{root}/src/cxx/{file}")))
        .files((target_os == "linux").then(|| format!("{root}/src/cxx/{LINUX_LAYER}")))
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        // Every exported function, referenced by nothing inside, is kept.
        .link_lib_modifier("+whole-archive")
        .try_compile("tvm_ffi_cxx");
    match compiled {
        Ok(()) => {}
        // Checking for macOS from another system, without Apple's SDK: the
        // Rust code is checked, the C++ layer is not (a link would fail).
        Err(e) if target_os == "macos" && !cfg!(target_os = "macos") => println!(
            "cargo:warning=the C++ layer was not compiled for macOS here ({e}): \
             `cargo check` works, building the library needs macOS"
        ),
        Err(e) => panic!("compiling the C++ layer (src/cxx): {e}"),
    }
}

/// The C++ layer's sources on every target.
const LAYER: [&str; 2] = ["module.cc", "functions.cc"];

/// What the C++ layer adds on Linux: the C++ runtime functions older
/// releases' compiled code needs (the `[linux]` section of the export list).
const LINUX_LAYER: &str = "cxa_abi.cc";

/// The C++ layer for Windows, in MSVC's ABI (vtables, mangling, exceptions,
/// std::string), as the official DLL's C++ symbols are and as every C++
/// extension built with MSVC expects, whatever the Rust target's ABI. A
/// clang driver compiles it (`TVM_FFI_MSVC_CXX`, default `clang++`; may be
/// `tests/tools/zig-windows/c++`), without MSVC's headers (src/cxx/msvc/std.h
/// stands in); the target's archiver bundles it.
pub fn compile_msvc_layer(root: &Path) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    println!("cargo:rerun-if-env-changed=TVM_FFI_MSVC_CXX");
    let driver = std::env::var("TVM_FFI_MSVC_CXX").unwrap_or_else(|_| "clang++".into());
    let mut words = driver.split_whitespace();
    let program = words.next().unwrap_or("clang++");
    let (sources, flags) = msvc_compile_list(root);
    let mut objects = Vec::new();
    for file in &sources {
        let object = out.join(format!("msvc-{}.o", file.replace('/', "-")));
        let status = std::process::Command::new(program)
            .args(words.clone())
            .arg(format!("--target={arch}-pc-windows-msvc"))
            .args(&flags)
            .arg(format!("-I{}", root.join("include").display()))
            .arg("-c")
            .arg(root.join("src/cxx").join(file))
            .arg("-o")
            .arg(&object)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "running `{driver}` for the C++ layer in MSVC's ABI ({e}): install clang, \
                     or set TVM_FFI_MSVC_CXX to a clang driver (docs/platforms.md)"
                )
            });
        assert!(
            status.success(),
            "`{driver}` failed on src/cxx/{file} (MSVC's ABI)"
        );
        mingw_export_directives(&object);
        objects.push(object);
    }
    let archive = out.join("libtvm_ffi_cxx.a");
    let _ = std::fs::remove_file(&archive);
    let mut ar = cc::Build::new()
        .try_get_archiver()
        .expect("the target's archiver");
    let status = ar
        .arg("crs")
        .arg(&archive)
        .args(&objects)
        .status()
        .expect("running the target's archiver");
    assert!(status.success(), "archiving the C++ layer failed");
    println!("cargo:rustc-link-search=native={}", out.display());
    // Every exported function, referenced by nothing inside, is kept.
    println!("cargo:rustc-link-lib=static:+whole-archive=tvm_ffi_cxx");
}

/// The sources and flags of the C++ layer in MSVC's ABI
/// (`src/cxx/msvc/compile.txt`).
fn msvc_compile_list(root: &Path) -> (Vec<String>, Vec<String>) {
    let list = root.join("src/cxx/msvc/compile.txt");
    let text = std::fs::read_to_string(&list).expect("read src/cxx/msvc/compile.txt");
    let (mut sources, mut flags, mut section) = (Vec::new(), Vec::new(), "");
    for line in text.lines().map(str::trim) {
        match line {
            "" => {}
            _ if line.starts_with('#') => {}
            "[sources]" | "[flags]" => section = line,
            _ if section == "[sources]" => sources.push(line.to_string()),
            _ if section == "[flags]" => flags.push(line.to_string()),
            _ => panic!("src/cxx/msvc/compile.txt: `{line}` before a section"),
        }
    }
    (sources, flags)
}

/// Respells the export directives clang writes into `object`'s `.drectve`
/// for MSVC targets (`/EXPORT:name`) in mingw's spelling (`-export:name`,
/// the same length), which GNU ld reads too (lld reads both). The linker
/// then exports what the source marks `__declspec(dllexport)`.
fn mingw_export_directives(object: &Path) {
    use object::{Object, ObjectSection};
    let mut bytes = std::fs::read(object).expect("read a C++ layer object");
    let range = object::File::parse(&*bytes)
        .expect("parse a C++ layer object")
        .section_by_name(".drectve")
        .and_then(|section| section.file_range());
    let Some((start, size)) = range else {
        return;
    };
    let (start, size) = (start as usize, size as usize);
    let (from, to) = (b" /EXPORT:", b" -export:");
    let directives = &mut bytes[start..start + size];
    let mut at = 0;
    while let Some(found) = directives[at..].windows(from.len()).position(|w| w == from) {
        directives[at + found..at + found + to.len()].copy_from_slice(to);
        at += found + to.len();
    }
    std::fs::write(object, bytes).expect("write a C++ layer object");
}
