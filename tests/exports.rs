//! The cdylib's dynamic symbol table holds exactly the C API the headers
//! declare, the C++ symbols of the official library (`src/cxx/exports.map`)
//! and the documented additions, and its SONAME is `libtvm_ffi.so`, like
//! the official library. With `TVM_FFI_OFFICIAL_DIR` (the official wheel's
//! `tvm_ffi` directory) the C++ list is checked against its library too.

use object::read::elf::Dyn as _;
use object::{Object, ObjectSymbol};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// target/<profile>, where cargo puts the cdylib next to the test's deps/.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// Function names declared `TVM_FFI_DLL` in our headers.
fn header_functions() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = BTreeSet::new();
    for header in [
        "include/tvm/ffi/c_api.h",
        "include/tvm/ffi/extra/c_env_api.h",
        "include/tvm/ffi/extra/artifact.h",
    ] {
        let text = std::fs::read_to_string(root.join(header)).unwrap();
        // A declaration may wrap after `TVM_FFI_DLL`; join lines first.
        let joined = text.replace('\n', " ");
        for part in joined.split("TVM_FFI_DLL ").skip(1) {
            let decl = part.split('(').next().unwrap();
            if let Some(name) = decl.split_whitespace().last() {
                let name = name.trim_start_matches('*');
                if name.starts_with("TVMFFI") {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

/// The global symbols a shared library defines.
fn defined_dynamic_symbols(path: &Path) -> BTreeSet<String> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = object::File::parse(&*data).unwrap();
    file.dynamic_symbols()
        .filter(|s| s.is_definition() && (s.is_global() || s.is_weak()))
        .map(|s| s.name().unwrap().to_string())
        .collect()
}

/// The C++ symbols our version script exports.
fn cxx_exports() -> BTreeSet<String> {
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cxx/exports.map");
    std::fs::read_to_string(map)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("_Z"))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect()
}

#[test]
fn cxx_exports_are_the_official_ones() {
    let ours = cxx_exports();
    assert!(ours.len() >= 30, "parsed only {} C++ exports", ours.len());
    let Some(dir) = std::env::var_os("TVM_FFI_OFFICIAL_DIR") else {
        eprintln!("TVM_FFI_OFFICIAL_DIR unset: not compared with the official library");
        return;
    };
    let official: BTreeSet<String> =
        defined_dynamic_symbols(&Path::new(&dir).join("lib/libtvm_ffi.so"))
            .into_iter()
            // The C++ API, without the standard library's instantiations.
            .filter(|s| s.contains("N3tvm3ffi") && !s.starts_with("_ZNSt"))
            .collect();
    assert_eq!(
        ours, official,
        "our C++ exports differ from the official library's"
    );
}

#[test]
fn dynamic_exports_are_the_header_functions() {
    let exported = defined_dynamic_symbols(&target_dir().join("libtvm_ffi.so"));
    let mut declared = header_functions();
    assert!(
        declared.len() >= 50,
        "parsed only {} declarations",
        declared.len()
    );
    // The library is also a TVM-FFI module: its artifact operations are
    // exported in the packed convention (src/capi/library_exports.rs).
    for f in [
        "library_bin_write",
        "library_bin_inspect",
        "library_bin_to_c_source",
        "library_bin_write_object",
        "library_bin_build_shared_library",
        "inspect_file",
    ] {
        declared.insert(format!("__tvm_ffi_{f}"));
    }
    declared.extend(cxx_exports());
    assert_eq!(
        exported, declared,
        "exports differ from the header declarations"
    );
}

#[test]
fn soname_is_libtvm_ffi_so() {
    let path = target_dir().join("libtvm_ffi.so");
    let data = std::fs::read(&path).unwrap();
    let elf = object::read::elf::ElfFile64::<object::Endianness>::parse(&*data).unwrap();
    let endian = elf.endian();
    let sections = elf.elf_section_table();
    let dynamic = sections
        .dynamic(endian, &*data)
        .unwrap()
        .expect("a dynamic section");
    let (entries, strtab_index) = dynamic;
    let strings = sections.strings(endian, &*data, strtab_index).unwrap();
    let soname = entries
        .iter()
        .find(|d| d.d_tag(endian) == object::elf::DT_SONAME)
        .map(|d| d.string(endian, strings).unwrap())
        .expect("DT_SONAME");
    assert_eq!(soname, b"libtvm_ffi.so");
}
