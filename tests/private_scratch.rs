//! Scratch space is private and never followed: with every name the old
//! scheme used (`$TMPDIR/tvm-ffi-rs-<pid>-<n>`) planted as a symbolic link
//! to a victim directory, and a hard link to a victim file beside them,
//! every path that writes, compiles and loads for itself (building a shared
//! library, loading native artifacts, exporting an artifact set) works in a
//! fresh directory of its own: the victims are untouched, and nothing is
//! left behind. One test in this binary: it sets `TMPDIR` for the process.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use tvm_ffi::module::artifact::export::export_library;
use tvm_ffi::module::artifact::load::load_set;
use tvm_ffi::module::artifact::set::{Artifact, ArtifactSet};
use tvm_ffi::module::emit::build_shared_library;
use tvm_ffi::module::library_bin::{LibraryBin, ModuleEntry, write};

#[test]
fn scratch_directories_are_private_and_fresh() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("private-scratch");
    let _ = std::fs::remove_dir_all(&root);
    let (tmp, victim_dir, victim_file) = (
        root.join("tmp"),
        root.join("victim"),
        root.join("victim.txt"),
    );
    for d in [&tmp, &victim_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(&victim_file, b"precious").unwrap();
    let pid = std::process::id();
    for n in 0..64 {
        std::os::unix::fs::symlink(&victim_dir, tmp.join(format!("tvm-ffi-rs-{pid}-{n}"))).unwrap();
    }
    // The old scheme wrote `native.so` into that directory: through this
    // hard link, into the victim file.
    std::fs::hard_link(&victim_file, victim_dir.join("native.so")).unwrap();
    let planted: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    // SAFETY: the only test of this binary, before any thread reads the
    // environment.
    unsafe { std::env::set_var("TMPDIR", &tmp) };

    // Building a shared library from a tree.
    let blob = write(&LibraryBin {
        modules: vec![ModuleEntry {
            kind: b"_lib",
            payload: None,
        }],
        imports: vec![vec![]],
    })
    .unwrap();
    let out = root.join("tree.so");
    build_shared_library(&blob, &[], &out).expect("builds in a private directory");
    assert!(out.is_file());

    // Compiling and loading native artifacts; exporting the set.
    let kernel = Artifact::builder("k", "native", "kernel.c")
        .content(b"int scratch_kernel(void) { return 7; }\n")
        .format("c")
        .build()
        .unwrap();
    let set = ArtifactSet::new(vec![kernel], None).unwrap();
    load_set(&set).expect("loads from a private directory");
    export_library(&set, &root.join("set.so")).expect("exports through a private directory");

    assert_eq!(
        std::fs::read_dir(&victim_dir).unwrap().count(),
        1,
        "the victim directory was written"
    );
    assert_eq!(std::fs::read(&victim_file).unwrap(), b"precious");
    assert_eq!(std::fs::metadata(&victim_file).unwrap().nlink(), 2);
    let mut left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    let mut planted = planted;
    planted.sort();
    assert_eq!(left, planted, "a scratch directory was left behind");

    // While it exists, a scratch directory is the caller's alone.
    let mut seen_mode = None;
    let probe = Artifact::builder("p", "native", "probe.c")
        .content(b"int scratch_probe(void) { return 1; }\n")
        .format("c")
        .build()
        .unwrap();
    let watcher = std::thread::spawn({
        let tmp = tmp.clone();
        move || {
            for _ in 0..20_000 {
                for e in std::fs::read_dir(&tmp).unwrap().flatten() {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with("tvm-ffi-rs-")
                        && name.len() == "tvm-ffi-rs-".len() + 16
                        && let Ok(m) = std::fs::symlink_metadata(e.path())
                    {
                        return Some((m.is_dir(), m.permissions().mode() & 0o777));
                    }
                }
            }
            None
        }
    });
    load_set(&ArtifactSet::new(vec![probe], None).unwrap()).unwrap();
    if let Some(found) = watcher.join().unwrap() {
        seen_mode = Some(found);
    }
    if let Some((is_dir, mode)) = seen_mode {
        assert!(is_dir);
        assert_eq!(
            mode & 0o077,
            0,
            "a scratch directory others can read: {mode:o}"
        );
    }

    // A TMPDIR another user could write without the sticky bit: they could
    // rename our private directory away and put theirs, with their library,
    // in its place. Nothing is compiled or loaded there.
    let open_tmp = root.join("open-tmp");
    std::fs::create_dir(&open_tmp).unwrap();
    std::fs::set_permissions(&open_tmp, std::fs::Permissions::from_mode(0o777)).unwrap();
    // SAFETY: as above; no other thread of this test reads the environment.
    unsafe { std::env::set_var("TMPDIR", &open_tmp) };
    let kernel = Artifact::builder("k", "native", "kernel.c")
        .content(b"int open_tmp_kernel(void) { return 7; }\n")
        .format("c")
        .build()
        .unwrap();
    let err = load_set(&ArtifactSet::new(vec![kernel], None).unwrap()).expect_err("refused");
    assert!(
        err.to_string().contains(&format!(
            "refusing to make a private directory under {}: {} can be written by other users \
             and has no sticky bit (mode 777)",
            open_tmp.display(),
            open_tmp.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&open_tmp).unwrap().count(), 0);
    // With the sticky bit (as /tmp), it is safe again.
    std::fs::set_permissions(&open_tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let kernel = Artifact::builder("k", "native", "kernel.c")
        .content(b"int sticky_tmp_kernel(void) { return 7; }\n")
        .format("c")
        .build()
        .unwrap();
    load_set(&ArtifactSet::new(vec![kernel], None).unwrap()).expect("loads under a sticky TMPDIR");
}
