//! The cdylib's dynamic symbol table holds exactly the symbols of
//! `src/abi/exports.txt`, the one list of the ABI's exports: the C API the
//! headers declare, the library's packed exports (`__tvm_ffi_*`) and the
//! C++ symbols of the official library; its SONAME is `libtvm_ffi.so`, like
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

/// The names of one section of `src/abi/exports.txt` (`c`, `cxx`, `linux`),
/// or of every section.
fn listed_in(section: Option<&str>) -> BTreeSet<String> {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/abi/exports.txt");
    let mut current = String::new();
    let mut names = BTreeSet::new();
    for line in std::fs::read_to_string(list)
        .unwrap()
        .lines()
        .map(str::trim)
    {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.to_string();
        } else if section.is_none_or(|s| s == current) {
            names.insert(line.to_string());
        }
    }
    names
}

/// Every name of the list.
fn listed() -> BTreeSet<String> {
    listed_in(None)
}

/// The C++ symbols of the list (mangled names), on every system.
fn cxx_exports() -> BTreeSet<String> {
    listed_in(Some("cxx"))
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
fn dynamic_exports_are_the_list() {
    let exported = defined_dynamic_symbols(&target_dir().join("libtvm_ffi.so"));
    let listed = listed();
    let missing: Vec<_> = listed.difference(&exported).collect();
    let unlisted: Vec<_> = exported.difference(&listed).collect();
    assert!(
        missing.is_empty() && unlisted.is_empty(),
        "the library's exports differ from src/abi/exports.txt: listed but not exported \
         {missing:?}; exported but not listed {unlisted:?}"
    );
}

#[test]
fn the_listed_c_api_is_what_the_headers_declare() {
    let declared = header_functions();
    assert!(
        declared.len() >= 50,
        "parsed only {} declarations",
        declared.len()
    );
    let listed = listed_in(Some("c"));
    let c_api: BTreeSet<String> = listed
        .iter()
        .filter(|n| n.starts_with("TVMFFI"))
        .cloned()
        .collect();
    assert_eq!(c_api, declared, "the listed C API differs from the headers");
    // The rest of the C functions: the library as a TVM-FFI module, its
    // artifact operations in the packed convention
    // (src/capi/library_exports.rs).
    let others: Vec<_> = listed
        .iter()
        .filter(|n| !n.starts_with("TVMFFI") && !n.starts_with("__tvm_ffi_"))
        .collect();
    assert!(
        others.is_empty(),
        "listed names of no known kind: {others:?}"
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
