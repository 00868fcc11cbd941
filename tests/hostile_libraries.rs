//! Hostile libraries and files given to the loader and the inspector, each
//! generated here and tried in a child process (a crash or a hang fails the
//! test instead of killing the harness): a lying or zero blob symbol size,
//! libraries cut short, FIFOs and devices, non-UTF-8 paths, bare names
//! found through the search path, the system's reason in load errors, peak
//! memory of loading a large library, and option-like object names given
//! to the library builder.

use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tvm_ffi::core::Any;
use tvm_ffi::core::registry::get_global;
use tvm_ffi::core::string::{TextKind, make_text};
use tvm_ffi::module::library_bin::{LibraryBin, ModuleEntry, write};

/// A fresh directory for this test's files.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A blob holding only the library itself (`_lib`).
fn lib_only_blob() -> Vec<u8> {
    write(&LibraryBin {
        modules: vec![ModuleEntry {
            kind: b"_lib",
            payload: None,
        }],
        imports: vec![vec![]],
    })
    .unwrap()
}

/// Assembles `asm` into the shared library `out` with the system compiler.
fn build_asm(dir: &Path, asm: &str, out: &Path) {
    let src = dir.join("lib.s");
    std::fs::write(&src, asm).unwrap();
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-nostdlib", "-o"])
        .arg(out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success(), "assembling {}", src.display());
}

/// Assembly defining `__tvm_ffi__library_bin` as `bytes` with the declared
/// symbol size `size` (None: no `.size` directive, as hand-written assembly
/// often has), plus `padding` bytes of other read-only data after it.
fn blob_asm(bytes: &[u8], size: Option<u64>, padding: usize) -> String {
    let mut s = String::from(
        ".section .rodata\n.globl __tvm_ffi__library_bin\n.type __tvm_ffi__library_bin, @object\n",
    );
    if let Some(size) = size {
        s += &format!(".size __tvm_ffi__library_bin, {size}\n");
    }
    s += ".p2align 3\n__tvm_ffi__library_bin:\n";
    for b in bytes {
        s += &format!(".byte {b}\n");
    }
    if padding > 0 {
        s += &format!("filler:\n.zero {padding}\n");
    }
    s += ".section .note.GNU-stack,\"\",@progbits\n";
    s
}

/// What a child process saw: `ok <detail>`, `err <kind: message>`, or how
/// it ended if it printed neither (a signal, a hang).
fn in_child(case: &str, arg: &[u8], env: &[(&str, &Path)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_probe", "--exact", "--nocapture", "--test-threads=1"])
        .env("HOSTILE_CASE", case)
        .env("HOSTILE_ARG", std::ffi::OsStr::from_bytes(arg))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            return "hang".into();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    out.lines()
        .find_map(|l| l.split_once("RESULT: ").map(|(_, r)| r))
        .map(str::to_string)
        .unwrap_or_else(|| format!("no result ({status})"))
}

/// Peak resident memory of this process, in KiB.
fn max_rss_kib() -> i64 {
    // SAFETY: getrusage writes into the struct we pass.
    unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage.ru_maxrss
    }
}

/// The child side: runs the case named by the environment and prints one
/// `RESULT:` line. Does nothing when run as an ordinary test.
#[test]
fn child_probe() {
    let Ok(case) = std::env::var("HOSTILE_CASE") else {
        return;
    };
    let arg = std::env::var_os("HOSTILE_ARG").unwrap();
    let arg = arg.as_bytes();
    let call = |global: &str| {
        let f = get_global(global.as_bytes()).unwrap();
        f.call(&[make_text(arg, TextKind::Str).view()])
    };
    let before = max_rss_kib();
    let result = match case.as_str() {
        "load" => call("ffi.ModuleLoadFromFile").map(|m| {
            let kind = get_global(b"ffi.ModuleGetKind")
                .unwrap()
                .call(&[m.view()])
                .unwrap();
            let kind = String::from_utf8_lossy(kind.view().as_str_bytes().unwrap()).into_owned();
            format!("kind={kind} rss_growth_kib={}", max_rss_kib() - before)
        }),
        "inspect" => call("ffi.InspectFile").map(|_| "inspected".to_string()),
        other => panic!("unknown case {other}"),
    };
    let line = match result {
        Ok(detail) => format!("ok {detail}"),
        Err(e) => format!("err {e}"),
    };
    let mut stdout = std::io::stdout();
    writeln!(stdout, "RESULT: {}", line.replace('\n', " ")).unwrap();
}

#[test]
fn a_lying_blob_symbol_size_is_bounded_by_the_loaded_segment() {
    let dir = workdir("lying_size");
    // The symbol claims 2^40 bytes and the blob agrees (its 8-byte size
    // field, then 2^40 - 8 bytes); it then claims 2^36 - 16 import entries,
    // which would walk far past the mapping.
    let mut bytes = ((1u64 << 40) - 8).to_le_bytes().to_vec();
    bytes.extend(((1u64 << 36) - 16).to_le_bytes());
    let lib = dir.join("lying.so");
    build_asm(&dir, &blob_asm(&bytes, Some(1 << 40), 0), &lib);
    let out = in_child("load", lib.as_os_str().as_bytes(), &[]);
    assert!(
        out.starts_with("err ValueError: malformed __tvm_ffi__library_bin at byte 0: the blob declares 1099511627768 bytes but only"),
        "{out}"
    );
}

#[test]
fn a_blob_symbol_of_size_zero_loads() {
    let dir = workdir("zero_size");
    let lib = dir.join("zero.so");
    build_asm(&dir, &blob_asm(&lib_only_blob(), Some(0), 0), &lib);
    assert_eq!(
        in_child("load", lib.as_os_str().as_bytes(), &[])
            .split(' ')
            .take(2)
            .collect::<Vec<_>>(),
        ["ok", "kind=library"]
    );
    // No `.size` at all.
    let lib = dir.join("nosize.so");
    build_asm(&dir, &blob_asm(&lib_only_blob(), None, 0), &lib);
    assert!(in_child("load", lib.as_os_str().as_bytes(), &[]).starts_with("ok kind=library"));
}

#[test]
fn a_bare_name_is_found_through_the_search_path() {
    let dir = workdir("bare");
    build_asm(
        &dir,
        &blob_asm(&lib_only_blob(), None, 0),
        &dir.join("libhostile_bare.so"),
    );
    let out = in_child("load", b"libhostile_bare.so", &[("LD_LIBRARY_PATH", &dir)]);
    assert!(out.starts_with("ok kind=library"), "{out}");
}

#[test]
fn load_errors_say_what_the_system_said() {
    let dir = workdir("reasons");
    let missing = dir.join("missing.so");
    let out = in_child("load", missing.as_os_str().as_bytes(), &[]);
    assert!(
        out.starts_with("err InternalError: Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library")
            && out.ends_with("cannot open shared object file: No such file or directory"),
        "{out}"
    );
    let text = dir.join("text.so");
    std::fs::write(
        &text,
        "not a library, but long enough to have an ELF header's size ........",
    )
    .unwrap();
    let out = in_child("load", text.as_os_str().as_bytes(), &[]);
    assert!(out.ends_with("invalid ELF header"), "{out}");
    let subdir = dir.join("dir.so");
    std::fs::create_dir(&subdir).unwrap();
    let out = in_child("load", subdir.as_os_str().as_bytes(), &[]);
    assert!(
        out.ends_with("dir.so is a directory, not a regular file"),
        "{out}"
    );
}

#[test]
fn a_non_utf8_path_loads() {
    let dir = workdir("non_utf8");
    let sub = dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&sub).unwrap();
    let lib = sub.join("lib.so");
    build_asm(&dir, &blob_asm(&lib_only_blob(), None, 0), &lib);
    let out = in_child("load", lib.as_os_str().as_bytes(), &[]);
    assert!(out.starts_with("ok kind=library"), "{out}");
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_and_devices_are_refused_not_read_forever() {
    let dir = workdir("fifo");
    let fifo = dir.join("x.so");
    mkfifo(&fifo);
    let out = in_child("load", fifo.as_os_str().as_bytes(), &[]);
    assert!(out.ends_with("x.so is a FIFO, not a regular file"), "{out}");
    let out = in_child("inspect", fifo.as_os_str().as_bytes(), &[]);
    assert!(
        out.starts_with("err ValueError: ") && out.ends_with("x.so is a FIFO, not a regular file"),
        "{out}"
    );
    let out = in_child("inspect", b"/dev/zero", &[]);
    assert_eq!(
        out,
        "err ValueError: /dev/zero is a character device, not a regular file"
    );
    // A device given to the loader directly (no extension picks a loader).
    let zero = dir.join("zero.so");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let out = in_child("load", zero.as_os_str().as_bytes(), &[]);
    assert!(
        out.ends_with("zero.so is a character device, not a regular file"),
        "{out}"
    );
}

#[test]
fn libraries_cut_short_are_refused_and_large_ones_are_not_read() {
    let dir = workdir("truncated");
    // A valid library with 64 MiB of read-only data after its blob.
    let big = dir.join("big.so");
    build_asm(&dir, &blob_asm(&lib_only_blob(), None, 64 << 20), &big);
    let out = in_child("load", big.as_os_str().as_bytes(), &[]);
    let growth: i64 = out
        .strip_prefix("ok kind=library rss_growth_kib=")
        .unwrap_or_else(|| panic!("{out}"))
        .parse()
        .unwrap();
    // Before, the whole file was read after dlopen (64 MiB and more).
    assert!(
        growth < 16 << 10,
        "loading grew the peak RSS by {growth} KiB"
    );
    let data = std::fs::read(&big).unwrap();
    for cut in [4096, 9 << 10, data.len() / 2] {
        let short = dir.join(format!("cut{cut}.so"));
        std::fs::write(&short, &data[..cut]).unwrap();
        let out = in_child("load", short.as_os_str().as_bytes(), &[]);
        assert!(
            out.contains(&format!("is cut short ({cut} bytes): "))
                && out.ends_with("lies beyond its end"),
            "{out}"
        );
        // Inspection of the same file gives an error or a summary, never a crash.
        let out = in_child("inspect", short.as_os_str().as_bytes(), &[]);
        assert!(out.starts_with("err ") || out.starts_with("ok "), "{out}");
    }
}

#[test]
fn option_like_object_names_are_refused_by_the_library_builder() {
    let f = get_global(b"ffi.LibraryBinBuildSharedLibrary").unwrap();
    let blob = make_text(&lib_only_blob(), TextKind::Bytes);
    let dir = workdir("builder");
    let out = make_text(dir.join("out.so").as_os_str().as_bytes(), TextKind::Str);
    for name in ["-nostdlib", "-o/tmp/evil", ""] {
        let objects =
            tvm_ffi::core::seq::new_array(vec![make_text(name.as_bytes(), TextKind::Str)]);
        let objects = Any::from(objects);
        let err = f
            .call(&[blob.view(), objects.view(), out.view()])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "ValueError: object file name `{name}` is empty or starts with `-`, which the C \
                 compiler would take for an option; name it `./{name}` instead"
            )
        );
    }
    assert!(!dir.join("out.so").exists());
}

/// Builds a library whose `__tvm_ffi_version` returns `version`.
fn build_versioned(dir: &Path, version: i64, out: &Path) {
    let src = dir.join(format!("v{version}.c"));
    std::fs::write(
        &src,
        format!(
            "#include <tvm/ffi/c_api.h>\n\
             TVM_FFI_DLL_EXPORT int __tvm_ffi_version(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {{\n\
             r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = {version}; return 0; }}\n"
        ),
    )
    .unwrap();
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(&src)
        .arg(concat!("-I", env!("CARGO_MANIFEST_DIR"), "/include"))
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_rebuilt_library_loads_anew_while_the_old_image_stays_mapped() {
    let dir = workdir("rebuilt");
    let lib = dir.join("versioned.so");
    let version_of = || {
        let m = tvm_ffi::module::globals::load_from_file(lib.as_os_str().as_bytes()).unwrap();
        let f = get_global(b"ffi.ModuleGetFunction").unwrap();
        let name = make_text(b"version", TextKind::Str);
        let f = f
            .call(&[
                Any::from(m.into_object()).view(),
                name.view(),
                Any::from(false).view(),
            ])
            .unwrap();
        let f = tvm_ffi::core::Function::from_object(f.view().to_object().unwrap()).unwrap();
        (f.call(&[]).unwrap().view().as_i64().unwrap(), f)
    };
    build_versioned(&dir, 1, &lib);
    let (v1, f1) = version_of();
    // Rebuilt in place at the same path (the linker writes a new file).
    std::thread::sleep(Duration::from_millis(20));
    build_versioned(&dir, 2, &lib);
    let (v2, _) = version_of();
    let (v2_again, _) = version_of();
    assert_eq!((v1, v2, v2_again), (1, 2, 2));
    // The first image is still mapped and its function still answers.
    assert_eq!(f1.call(&[]).unwrap().view().as_i64(), Some(1));
}
