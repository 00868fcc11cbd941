//! The inspector CLI and the object-file writer together: a relocatable
//! object carrying a written tree is decoded without being loaded.

mod common;

use std::path::Path;
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
    let out = common::target_command(env!("CARGO_BIN_EXE_tvm-ffi-inspect"))
        .arg(&obj)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("library_bin: 2 module(s)"), "{text}");
    assert!(text.contains("[1] cuda (300 bytes) imports []"), "{text}");

    let garbage = dir.join("garbage.so");
    std::fs::write(&garbage, b"not an object file at all").unwrap();
    let out = common::target_command(env!("CARGO_BIN_EXE_tvm-ffi-inspect"))
        .arg(&garbage)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an object file"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes a relocatable object with a `__tvm_ffi__cubin_<name>` / `_end`
/// pair around `bytes`.
fn object_with_cubin(name: &str, bytes: &[u8]) -> Vec<u8> {
    use object::write::{Object, StandardSection, Symbol, SymbolSection};
    use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolKind, SymbolScope};
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let section = obj.section_id(StandardSection::ReadOnlyData);
    let start = obj.append_section_data(section, bytes, 8);
    for (sym, at) in [
        (format!("__tvm_ffi__cubin_{name}"), start),
        (
            format!("__tvm_ffi__cubin_{name}_end"),
            start + bytes.len() as u64,
        ),
    ] {
        obj.add_symbol(Symbol {
            name: sym.into_bytes(),
            value: at,
            size: 0,
            kind: SymbolKind::Data,
            scope: SymbolScope::Dynamic,
            weak: false,
            section: SymbolSection::Section(section),
            flags: SymbolFlags::None,
        });
    }
    obj.write().unwrap()
}

#[test]
fn lists_and_extracts_artifacts_and_cubins() {
    use tvm_ffi::module::artifact::set::{Artifact, ArtifactSet};
    let dir =
        std::env::temp_dir().join(format!("tvm-ffi-inspect-artifacts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cli = || common::target_command(env!("CARGO_BIN_EXE_tvm-ffi-inspect"));

    let cubin = dir.join("kernels.o");
    std::fs::write(&cubin, object_with_cubin("gemm", &[0u8; 100])).unwrap();
    let out = cli().arg(&cubin).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("cubins (1):\n    gemm (100 bytes)"),
        "{text}"
    );

    let a = Artifact::builder("cuda", "cuda_module", "k.cubin")
        .content(b"cubin bytes")
        .format("cubin")
        .build()
        .unwrap();
    let g = Artifact::builder("graph", "graph", "g.json")
        .content(b"{}")
        .format("json")
        .build()
        .unwrap();
    let set = ArtifactSet::new(vec![a, g], None).unwrap();
    let tar = dir.join("model.tar");
    std::fs::write(&tar, tvm_ffi::module::artifact::mlf::export(&set).unwrap()).unwrap();
    let out = cli().arg(&tar).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Model Library Format tarball"), "{text}");
    assert!(
        text.contains("    cuda/k.cubin: loader cuda_module, format cubin, 11 bytes, sha256 "),
        "{text}"
    );

    let extracted = dir.join("out");
    let out = cli()
        .arg("--extract")
        .arg(&extracted)
        .arg(&tar)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(extracted.join("cuda/k.cubin")).unwrap(),
        b"cubin bytes"
    );
    assert_eq!(
        std::fs::read(extracted.join("graph/g.json")).unwrap(),
        b"{}"
    );

    // A codegen directory that is a link out of DIR is refused, nothing written there.
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let trap = dir.join("trap");
    std::fs::create_dir_all(&trap).unwrap();
    std::os::unix::fs::symlink(&outside, trap.join("cuda")).unwrap();
    let out = cli()
        .arg("--extract")
        .arg(&trap)
        .arg(&tar)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is not a directory"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());

    // A file without a set: a one-line error, nonzero status.
    let out = cli()
        .arg("--extract")
        .arg(&extracted)
        .arg(&cubin)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.trim_end().ends_with("records no artifact set"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the inspector with `args`, killed after 20 s (a hang fails).
fn run_bounded(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut child = common::target_command(env!("CARGO_BIN_EXE_tvm-ffi-inspect"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("tvm-ffi-inspect {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn safe_on_anything() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use tvm_ffi::module::artifact::set::{Artifact, ArtifactSet};
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspect-hostile");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // Not regular files: refused in one line, never read.
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (path, what) in [
        (fifo.as_os_str(), "a FIFO"),
        (OsStr::new("/dev/zero"), "device"),
        (dir.as_os_str(), "a directory"),
    ] {
        let out = run_bounded(&[path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(what),
            "{path:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // An 8 GiB sparse file is mapped, not read.
    let sparse = dir.join("sparse.so");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let started = std::time::Instant::now();
    let out = run_bounded(&[sparse.as_os_str()]);
    assert!(!out.status.success(), "a file of zeros is no object file");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    std::fs::remove_file(&sparse).unwrap();

    // Paths are bytes.
    let odd = dir.join(OsStr::from_bytes(b"model-\xff.tar"));
    let a = Artifact::builder("cuda", "cuda_module", "k.cubin")
        .content(b"new bytes")
        .build()
        .unwrap();
    let set = ArtifactSet::new(vec![a], None).unwrap();
    std::fs::write(&odd, tvm_ffi::module::artifact::mlf::export(&set).unwrap()).unwrap();
    let out = run_bounded(&[odd.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // --extract writes new files: a hard link, a symbolic link or a FIFO
    // already at the name is replaced, not written through.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    for plant in ["hard link", "symlink", "fifo"] {
        let out_dir = dir.join(format!("out-{}", plant.replace(' ', "-")));
        std::fs::create_dir_all(out_dir.join("cuda")).unwrap();
        let target = out_dir.join("cuda/k.cubin");
        match plant {
            "hard link" => std::fs::hard_link(&victim, &target).unwrap(),
            "symlink" => std::os::unix::fs::symlink(&victim, &target).unwrap(),
            _ => assert!(
                Command::new("mkfifo")
                    .arg(&target)
                    .status()
                    .unwrap()
                    .success()
            ),
        }
        let out = run_bounded(&[
            OsStr::new("--extract"),
            out_dir.as_os_str(),
            odd.as_os_str(),
        ]);
        assert!(
            out.status.success(),
            "{plant}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new bytes", "{plant}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "{plant}");
        let names: Vec<_> = std::fs::read_dir(out_dir.join("cuda"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names.len(),
            1,
            "{plant}: a temporary file was left: {names:?}"
        );
    }

    // --help and --version answer on stdout with status 0.
    for flag in ["--help", "--version"] {
        let out = run_bounded(&[OsStr::new(flag)]);
        assert!(
            out.status.success() && !out.stdout.is_empty() && out.stderr.is_empty(),
            "{flag}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An object file exporting `n` functions `__tvm_ffi_f<i>`.
fn object_with_functions(n: usize) -> Vec<u8> {
    use object::write::{Object, StandardSection, Symbol, SymbolSection};
    use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolKind, SymbolScope};
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let text = obj.section_id(StandardSection::Text);
    let code = obj.append_section_data(text, &vec![0xc3u8; n], 1);
    for i in 0..n {
        obj.add_symbol(Symbol {
            name: format!("__tvm_ffi_f{i}").into_bytes(),
            value: code + i as u64,
            size: 1,
            kind: SymbolKind::Text,
            scope: SymbolScope::Dynamic,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::None,
        });
    }
    obj.write().unwrap()
}

#[test]
fn listing_many_functions_is_linear() {
    // 10^5 functions: a search per symbol made this quadratic (seconds);
    // sorted and deduplicated it is a few milliseconds (measured, not
    // asserted: a timed test would be flaky).
    let data = object_with_functions(100_000);
    let found = tvm_ffi::module::inspect::inspect(&data).unwrap();
    assert_eq!(found.functions.len(), 100_000);
    assert!(found.functions.windows(2).all(|w| w[0] < w[1]));
}
