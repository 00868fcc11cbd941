//! The inspector CLI and the object-file writer together: a relocatable
//! object carrying a written tree is decoded without being loaded.

use std::process::Command;
use tvm_ffi::module::emit::to_object_file;
use tvm_ffi::module::library_bin::{LIB_KIND, LibraryBin, ModuleEntry, write};

#[test]
fn inspects_an_object_file_written_by_the_writer() {
    let blob = write(&LibraryBin {
        modules: vec![
            ModuleEntry {
                kind: LIB_KIND,
                payload: None,
            },
            ModuleEntry {
                kind: b"cuda",
                payload: Some(&[7u8; 300]),
            },
        ],
        imports: vec![vec![1], vec![]],
    })
    .unwrap();
    let dir = std::env::temp_dir().join(format!("tvm-ffi-inspect-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("tree.o");
    std::fs::write(&obj, to_object_file(&blob).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tvm-ffi-inspect"))
        .arg(&obj)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("library_bin: 2 module(s)"), "{text}");
    assert!(text.contains("[1] cuda (300 bytes) imports []"), "{text}");

    let garbage = dir.join("garbage.so");
    std::fs::write(&garbage, b"not an object file at all").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tvm-ffi-inspect"))
        .arg(&garbage)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an object file"));
    std::fs::remove_dir_all(&dir).unwrap();
}
