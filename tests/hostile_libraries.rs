//! Hostile libraries and files given to the loader and the inspector, each
//! generated here and tried in a child process (a crash or a hang fails the
//! test instead of killing the harness): a lying or zero blob symbol size,
//! libraries cut short, FIFOs and devices, non-UTF-8 paths, bare names
//! found through the search path, the system's reason in load errors, peak
//! memory of loading a large library, option-like object names given to
//! the library builder, libraries renamed or rewritten while they load,
//! libraries in directories others can write, and the backtrace machinery
//! facing a library mapped where an unloaded one was, debug sections
//! claiming absurd sizes and an absurd traceback limit.
//!
//! One file (about 950 lines): every case runs in a child process through
//! the one harness below (`in_child`, `child_probe`).

mod common;

use common::{build_versioned, load_version};

use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tvm_ffi::module::library_bin::{LibraryBin, ModuleEntry, write};
use tvm_ffi::runtime::registry::get_global;
use tvm_ffi::runtime::{Any, Function};
use tvm_ffi::runtime::{TextKind, make_text};

/// A fresh directory for this test's files.
fn workdir(name: &str) -> PathBuf {
    common::workdir("hostile", name)
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
    let status = common::c_compiler()
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

/// What a child process saw running `case` (see [`common::in_child`]).
fn in_child(case: &str, arg: &[u8], env: &[(&str, &Path)]) -> String {
    common::in_child("child_probe", case, arg, env)
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
        "race" => Ok(rename_race(
            Path::new(std::ffi::OsStr::from_bytes(arg)),
            true,
        )),
        "race-complete" => Ok(rename_race(
            Path::new(std::ffi::OsStr::from_bytes(arg)),
            false,
        )),
        "rewrite" => Ok(rewrite_in_place(Path::new(std::ffi::OsStr::from_bytes(
            arg,
        )))),
        "cycles" => Ok(reload_cycles(Path::new(std::ffi::OsStr::from_bytes(arg)))),
        "origin" => Ok(origin_reloads(Path::new(std::ffi::OsStr::from_bytes(arg)))),
        "untrusted" => Ok(untrusted_dir(Path::new(std::ffi::OsStr::from_bytes(arg)))),
        "remapped" => Ok(remapped(Path::new(std::ffi::OsStr::from_bytes(arg)))),
        "inflated" => Ok(inflated(Path::new(std::ffi::OsStr::from_bytes(arg)))),
        "deep-limit" => Ok(deep_limit(Path::new(std::ffi::OsStr::from_bytes(arg)))),
        other => panic!("unknown case {other}"),
    };
    let line = match result {
        Ok(detail) => format!("ok {detail}"),
        Err(e) => format!("err {e}"),
    };
    common::print_result(&line);
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
        // Inspection of the same file says its section headers lie outside it.
        let out = in_child("inspect", short.as_os_str().as_bytes(), &[]);
        assert_eq!(
            out,
            "err ValueError: not an object file: Invalid ELF section header offset/size/alignment"
        );
    }
}

#[test]
fn option_like_object_names_are_refused_by_the_library_builder() {
    let f = get_global(b"ffi.LibraryBinBuildSharedLibrary").unwrap();
    let blob = make_text(&lib_only_blob(), TextKind::Bytes);
    let dir = workdir("builder");
    let out = make_text(dir.join("out.so").as_os_str().as_bytes(), TextKind::Str);
    for name in ["-nostdlib", "-o/tmp/evil", ""] {
        let objects = tvm_ffi::runtime::new_array(vec![make_text(name.as_bytes(), TextKind::Str)]);
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

#[test]
fn a_rebuilt_library_loads_anew_while_the_old_image_stays_mapped() {
    let dir = workdir("rebuilt");
    let lib = dir.join("versioned.so");
    let version_of = || {
        let m = tvm_ffi::module::load_from_file(lib.as_os_str().as_bytes()).unwrap();
        let f = get_global(b"ffi.ModuleGetFunction").unwrap();
        let name = make_text(b"version", TextKind::Str);
        let f = f
            .call(&[
                Any::from(m.into_object()).view(),
                name.view(),
                Any::from(false).view(),
            ])
            .unwrap();
        let f = tvm_ffi::runtime::Function::from_object(f.view().to_object().unwrap()).unwrap();
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

/// Replaces `path` by a new file holding `bytes`, extended (sparsely) to
/// `len` bytes, through a rename.
fn rename_over(path: &Path, bytes: &[u8], len: u64, n: usize) {
    let tmp = path.with_extension(format!("tmp{n}"));
    let file = std::fs::File::create(&tmp).unwrap();
    (&file).write_all(bytes).unwrap();
    file.set_len(len).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The child side of the rename race: `dir` holds `v7.so`, loaded once
/// from `dir/lib.so`; then 8 threads load that path for 3 seconds while
/// this thread renames complete copies (small ones, read whole, and ones
/// padded past 64 MiB, checked through their descriptor) and, with
/// `cut_short`, cut-short ones over it: each load of a new file is a
/// reload.
fn rename_race(dir: &Path, cut_short: bool) -> String {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let good = std::fs::read(dir.join("v7.so")).unwrap();
    let lib = dir.join("lib.so");
    rename_over(&lib, &good, good.len() as u64, 0);
    let first = load_version(&lib).map(|r| r.0);
    assert_eq!(first, Ok(7));
    let stop = AtomicBool::new(false);
    let (loads, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let unexpected = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    match load_version(&lib) {
                        Ok((7, ..)) => loads.fetch_add(1, Ordering::Relaxed),
                        Err(e) if e.contains("is cut short") => {
                            refused.fetch_add(1, Ordering::Relaxed)
                        }
                        other => {
                            unexpected
                                .lock()
                                .unwrap()
                                .push(format!("{:?}", other.map(|r| r.0)));
                            0
                        }
                    };
                }
            });
        }
        let start = Instant::now();
        let mut n = 1;
        while start.elapsed() < Duration::from_secs(3) {
            let (bytes, len) = match n % if cut_short { 3 } else { 2 } {
                0 => (&good[..], good.len() as u64),
                1 => (&good[..], (65 << 20) + n as u64),
                _ => {
                    let cut = 64 + (n * 7919) % (good.len() - 64);
                    (&good[..cut], cut as u64)
                }
            };
            rename_over(&lib, bytes, len, n);
            n += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let unexpected = unexpected.into_inner().unwrap();
    format!(
        "loads={} refused={} unexpected={}",
        loads.load(Ordering::Relaxed).min(1),
        refused
            .load(Ordering::Relaxed)
            .min(u64::from(cut_short) as usize),
        unexpected.len()
    ) + &unexpected
        .first()
        .map(|u| format!(" first={u}"))
        .unwrap_or_default()
}

/// Rewrites the file at `path` in place (the same inode), as `cp new.so
/// path` and Python's `open(path, "wb")` do.
fn rewrite(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap();
    file.write_all(bytes).unwrap();
}

/// The child side of rewriting in place: `dir` holds `v1.so` and `v2.so`.
fn rewrite_in_place(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let (v1, v2) = (
        std::fs::read(dir.join("v1.so")).unwrap(),
        std::fs::read(dir.join("v2.so")).unwrap(),
    );
    let lib = dir.join("lib.so");
    std::fs::write(&lib, &v1).unwrap();
    let inode = std::fs::metadata(&lib).unwrap().ino();
    let (a, f1, _) = load_version(&lib).unwrap();
    rewrite(&lib, &v2);
    let (b, f2, _) = load_version(&lib).unwrap();
    rewrite(&lib, &v1);
    let (c, ..) = load_version(&lib).unwrap();
    assert_eq!(std::fs::metadata(&lib).unwrap().ino(), inode);
    // The old images still answer, from what they were loaded from.
    let old = (
        f1.call(&[]).unwrap().view().as_i64().unwrap(),
        f2.call(&[]).unwrap().view().as_i64().unwrap(),
    );
    format!("loaded={a},{b},{c} old={},{}", old.0, old.1)
}

/// Lines of /proc/self/maps and resident KiB of this process.
fn mappings_and_rss() -> (usize, u64) {
    let maps = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count();
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    (maps, pages * 4)
}

/// The child side of 300 rebuild-reload cycles: `dir` holds `v1.so` and
/// `v2.so`; each cycle rewrites `lib.so` in place with the other version,
/// loads it, calls it and, with `release`, says it is done with it
/// (`ffi.ModuleGlobalsRemove`) before dropping everything.
fn reload_cycles(dir: &Path) -> String {
    let versions = [
        std::fs::read(dir.join("v1.so")).unwrap(),
        std::fs::read(dir.join("v2.so")).unwrap(),
    ];
    let lib = dir.join("lib.so");
    let remove = get_global(b"ffi.ModuleGlobalsRemove").unwrap();
    let run = |release: bool| {
        let before = mappings_and_rss();
        for i in 0..300 {
            rewrite(&lib, &versions[i % 2]);
            let (v, f, m) = load_version(&lib).unwrap();
            assert_eq!(v, 1 + (i % 2) as i64);
            drop(f);
            if release {
                remove.call(&[m.view()]).unwrap();
            }
        }
        let after = mappings_and_rss();
        format!(
            "maps {}->{} rss_kib {}->{}",
            before.0, after.0, before.1, after.1
        )
    };
    let kept = run(false);
    let released = run(true);
    format!("kept: {kept}; released: {released}")
}

/// With `TVM_FFI_LOAD_PRIVATE=1` every load maps a checked private copy:
/// renames over the path, cut short or not, never reach the loader.
#[test]
fn renames_over_a_loading_path_never_reach_the_loader_in_private_mode() {
    let dir = workdir("race");
    build_versioned(&dir, 7, &dir.join("v7.so"));
    let private = [("TVM_FFI_LOAD_PRIVATE", Path::new("1"))];
    let out = in_child("race", dir.as_os_str().as_bytes(), &private);
    assert_eq!(out, "ok loads=1 refused=1 unexpected=0");
}

/// By default a path's first load maps the real path, and every later load
/// of a new file there (a reload) maps a private link to, or copy of, the
/// inode that was checked: files renamed over the path while 8 threads load
/// it, complete or cut short, give a working module or the clear error
/// that the file is cut short, never the wrong code or a crash (before:
/// SIGBUS inside the system loader within a second).
#[test]
fn renames_over_a_loaded_path_never_reach_the_loader() {
    let dir = workdir("race-default");
    build_versioned(&dir, 7, &dir.join("v7.so"));
    let out = in_child("race", dir.as_os_str().as_bytes(), &[]);
    assert_eq!(out, "ok loads=1 refused=1 unexpected=0");
}

/// Complete renames only: every load succeeds.
#[test]
fn complete_renames_over_a_loaded_path_all_load() {
    let dir = workdir("race-complete");
    build_versioned(&dir, 7, &dir.join("v7.so"));
    let out = in_child("race-complete", dir.as_os_str().as_bytes(), &[]);
    assert_eq!(out, "ok loads=1 refused=0 unexpected=0");
}

#[test]
fn a_library_rewritten_in_place_reloads_as_the_new_code() {
    let dir = workdir("rewrite");
    build_versioned(&dir, 1, &dir.join("v1.so"));
    build_versioned(&dir, 2, &dir.join("v2.so"));
    let out = in_child("rewrite", dir.as_os_str().as_bytes(), &[]);
    assert_eq!(out, "ok loaded=1,2,1 old=1,2");
}

/// Prints the figures: run with `--nocapture` to see them.
#[test]
fn released_libraries_are_unloaded_across_rebuild_cycles() {
    let dir = workdir("cycles");
    build_versioned(&dir, 1, &dir.join("v1.so"));
    build_versioned(&dir, 2, &dir.join("v2.so"));
    let out = in_child("cycles", dir.as_os_str().as_bytes(), &[]);
    println!("300 rebuild-reload cycles: {out}");
    let counts: Vec<i64> = out
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect();
    // [300?] kept: maps a->b rss c->d; released: maps e->f rss g->h
    let [
        ..,
        kept_maps0,
        kept_maps1,
        _,
        _,
        rel_maps0,
        rel_maps1,
        rel_rss0,
        rel_rss1,
    ] = counts[..]
    else {
        panic!("{out}")
    };
    assert!(kept_maps1 - kept_maps0 >= 300, "{out}");
    assert!(rel_maps1 - rel_maps0 < 30, "{out}");
    assert!(rel_rss1 - rel_rss0 < 8 << 10, "{out}");
}

/// Builds `dir/libdep.so` (soname `libdep.so`, `dep()` returns 40) and a
/// library `out` whose `version` returns `dep() + version`, finding
/// `libdep.so` through `$ORIGIN`.
fn build_with_origin(dir: &Path, version: i64, out: &Path) {
    let dep = dir.join("libdep.so");
    if !dep.exists() {
        std::fs::write(dir.join("dep.c"), "long dep(void) { return 40; }\n").unwrap();
        let status = common::c_compiler()
            .args(["-shared", "-fPIC", "-Wl,-soname,libdep.so", "-o"])
            .arg(&dep)
            .arg(dir.join("dep.c"))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let src = dir.join(format!("o{version}.c"));
    std::fs::write(
        &src,
        format!(
            "#include <tvm/ffi/c_api.h>\nlong dep(void);\n\
             TVM_FFI_DLL_EXPORT int __tvm_ffi_version(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {{\n\
             r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = dep() + {version}; return 0; }}\n"
        ),
    )
    .unwrap();
    let status = common::c_compiler()
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(&src)
        .arg(concat!("-I", env!("CARGO_MANIFEST_DIR"), "/include"))
        .arg(format!("-L{}", dir.display()))
        .args(["-ldep", "-Wl,-rpath,$ORIGIN"])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The child side of reloading a library that finds its dependency through
/// `$ORIGIN`: `dir` holds `o1.so` and `o2.so` built by [`build_with_origin`].
fn origin_reloads(dir: &Path) -> String {
    let lib = dir.join("lib.so");
    let (o1, o2) = (
        std::fs::read(dir.join("o1.so")).unwrap(),
        std::fs::read(dir.join("o2.so")).unwrap(),
    );
    std::fs::write(&lib, &o1).unwrap();
    let (a, f1, _) = load_version(&lib).unwrap();
    // A new file renamed over the path: loaded by a new spelling of it.
    rename_over(&lib, &o2, o2.len() as u64, 1);
    let (b, ..) = load_version(&lib).unwrap();
    // Rewritten in place: from a private copy, its dependency already loaded.
    rewrite(&lib, &o1);
    let (c, ..) = load_version(&lib).unwrap();
    let old = f1.call(&[]).unwrap().view().as_i64().unwrap();
    format!("loaded={a},{b},{c} old={old}")
}

#[test]
fn a_library_finding_its_dependencies_through_origin_reloads() {
    let dir = workdir("origin");
    build_with_origin(&dir, 1, &dir.join("o1.so"));
    build_with_origin(&dir, 2, &dir.join("o2.so"));
    let out = in_child("origin", dir.as_os_str().as_bytes(), &[]);
    assert_eq!(out, "ok loaded=41,42,41 old=41");
}

/// The mappings of this process whose file name is `name`: their paths.
fn mapped_paths(name: &str) -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut paths: Vec<String> = maps
        .lines()
        .filter_map(|l| l.find('/').map(|i| l[i..].to_string()))
        .filter(|p| p.rsplit('/').next() == Some(name))
        .collect();
    paths.dedup();
    paths
}

/// The child side of loading from a directory others may write without the
/// sticky bit: `dir/open/lib.so` is loaded from a private copy of the same
/// file name (never mapped from the open directory), which goes away once
/// the library is released and unloaded.
fn untrusted_dir(dir: &Path) -> String {
    let lib = dir.join("open/lib.so");
    let (v, f, m) = load_version(&lib).unwrap();
    let paths = mapped_paths("lib.so");
    let copied = paths.len() == 1
        && paths[0].contains("/tvm-ffi-rs-")
        && !paths[0].starts_with(&*dir.to_string_lossy());
    let copy_dir = Path::new(&paths[0]).parent().unwrap().to_path_buf();
    drop(f);
    get_global(b"ffi.ModuleGlobalsRemove")
        .unwrap()
        .call(&[m.view()])
        .unwrap();
    drop(m);
    // The next load unloads what was released.
    let _ = tvm_ffi::module::load_from_file(dir.join("v1.so").as_os_str().as_bytes());
    format!(
        "version={v} copied={copied} mapped_after_release={} copy_left={}",
        mapped_paths("lib.so").len(),
        copy_dir.exists()
    )
}

#[test]
fn a_library_in_a_directory_others_can_write_is_loaded_from_a_private_copy() {
    use std::os::unix::fs::PermissionsExt;
    let dir = workdir("untrusted");
    build_versioned(&dir, 1, &dir.join("v1.so"));
    std::fs::create_dir_all(dir.join("open")).unwrap();
    build_versioned(&dir, 3, &dir.join("open/lib.so"));
    std::fs::set_permissions(dir.join("open"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = in_child("untrusted", dir.as_os_str().as_bytes(), &[]);
    assert_eq!(
        out,
        "ok version=3 copied=true mapped_after_release=0 copy_left=false"
    );
}

/// Builds `out`, a library whose `run(cb, depth)` calls the C function `cb`
/// (an opaque pointer) from `<name>_site`, a function with a frame of `pad`
/// bytes, recursing `depth` times first: the same code layout for every
/// name, a different frame.
fn build_callback_site(dir: &Path, name: &str, pad: usize, extra: &[&str], out: &Path) {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(
        &src,
        format!(
            "#include <tvm/ffi/c_api.h>\n\
             typedef void (*cb_t)(void);\n\
             __attribute__((noinline)) void {name}_site(cb_t cb, long depth) {{\n\
               volatile char pad[{pad}]; pad[0] = 1;\n\
               if (depth > 0) {name}_site(cb, depth - 1); else cb();\n\
               pad[1] = 2; }}\n\
             TVM_FFI_DLL_EXPORT int __tvm_ffi_run(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {{\n\
               {name}_site((cb_t)a[0].v_ptr, n > 1 ? a[1].v_int64 : 0);\n\
               r->type_index = kTVMFFINone; r->zero_padding = 0; r->v_int64 = 0; return 0; }}\n"
        ),
    )
    .unwrap();
    let status = common::c_compiler()
        .args(["-shared", "-fPIC", "-O1", "-fno-omit-frame-pointer", "-o"])
        .arg(out)
        .arg(&src)
        .args(extra)
        .arg(concat!("-I", env!("CARGO_MANIFEST_DIR"), "/include"))
        .status()
        .unwrap();
    assert!(status.success());
}

/// The backtrace the last [`capture_backtrace`] took.
static CAPTURED: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// A C callback that takes a backtrace (`TVMFFIBacktrace`, from debug
/// information) and a raise-time one (`TVMFFIErrorSetRaisedFromCStr`).
extern "C" fn capture_backtrace() {
    // SAFETY: NULL location, as the C API allows; the answer lives until
    // the next call on this thread.
    let bt =
        unsafe { &*tvm_ffi::capi::TVMFFIBacktrace(core::ptr::null(), 0, core::ptr::null(), 1) };
    // SAFETY: the byte array the call answered.
    let text = unsafe { std::slice::from_raw_parts(bt.data.cast::<u8>(), bt.size) };
    let mut captured = String::from_utf8_lossy(text).into_owned();
    // SAFETY: NUL-terminated kind and message.
    unsafe {
        tvm_ffi::capi::TVMFFIErrorSetRaisedFromCStr(c"ValueError".as_ptr(), c"boom".as_ptr())
    };
    let raised = tvm_ffi::runtime::take_raised().unwrap();
    let cell = tvm_ffi::runtime::error_cell(&raised).unwrap();
    // SAFETY: the error's backtrace bytes, alive with `raised`.
    let text = unsafe {
        std::slice::from_raw_parts(cell.backtrace.data.cast::<u8>(), cell.backtrace.size)
    };
    captured.push_str(&String::from_utf8_lossy(text));
    *CAPTURED.lock().unwrap() = captured;
}

/// Loads `lib`, calls its `run` with [`capture_backtrace`], `depth` frames
/// deep, and answers the module and the backtraces taken.
fn run_callback_site(lib: &Path, depth: i64) -> (Any, String) {
    let m = tvm_ffi::module::load_from_file(lib.as_os_str().as_bytes()).unwrap();
    let m = Any::from(m.into_object());
    let name = make_text(b"run", TextKind::Str);
    let f = get_global(b"ffi.ModuleGetFunction")
        .unwrap()
        .call(&[m.view(), name.view(), Any::from(false).view()])
        .unwrap();
    let f = Function::from_object(f.view().to_object().unwrap()).unwrap();
    let cb = Any::opaque_ptr(capture_backtrace as *mut core::ffi::c_void);
    f.call(&[cb.view(), Any::from(depth).view()]).unwrap();
    (m, CAPTURED.lock().unwrap().clone())
}

/// Where the first mapping of a file named `name` starts.
fn mapped_at(name: &str) -> Option<usize> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .find(|l| l.ends_with(&format!("/{name}")))
        .and_then(|l| usize::from_str_radix(l.split('-').next()?, 16).ok())
}

/// The child side of a library mapped where an unloaded one was: `dir`
/// holds `alpha.so` and `beta.so`, the same code layout with different
/// frames. Backtraces through alpha fill the caches keyed by address; alpha
/// is released and unloaded; beta is mapped at its address: backtraces
/// through beta must name beta's frames (a stale unwind rule of alpha would
/// walk off the stack).
fn remapped(dir: &Path) -> String {
    let (m, through_alpha) = run_callback_site(&dir.join("alpha.so"), 0);
    let alpha_at = mapped_at("alpha.so");
    get_global(b"ffi.ModuleGlobalsRemove")
        .unwrap()
        .call(&[m.view()])
        .unwrap();
    drop(m);
    let (_m, through_beta) = run_callback_site(&dir.join("beta.so"), 0);
    let beta_at = mapped_at("beta.so");
    eprintln!(
        "alpha {alpha_at:x?} beta {beta_at:x?}\n--alpha\n{through_alpha}\n--beta\n{through_beta}"
    );
    format!(
        "same_address={} alpha_named={} beta_named={} alpha_in_beta={}",
        alpha_at.is_some() && alpha_at == beta_at,
        through_alpha.matches("alpha_site").count(),
        through_beta.matches("beta_site").count(),
        through_beta.contains("alpha_site")
    )
}

#[test]
fn a_library_mapped_where_an_unloaded_one_was_gets_its_own_frames() {
    let dir = workdir("remapped");
    build_callback_site(&dir, "alpha", 16, &[], &dir.join("alpha.so"));
    build_callback_site(&dir, "beta", 4096, &[], &dir.join("beta.so"));
    let out = in_child("remapped", dir.as_os_str().as_bytes(), &[]);
    // Natively the second library lands where the first was (the case
    // that crashed); an emulator's own mmap may place it elsewhere, and the
    // frames must be named right either way.
    let expected = "ok same_address=true alpha_named=2 beta_named=2 alpha_in_beta=false";
    if cfg!(target_arch = "x86_64") {
        assert_eq!(out, expected);
    } else {
        assert_eq!(
            out.replace("same_address=false", "same_address=true"),
            expected
        );
    }
}

/// Makes the first compressed section of the ELF file `path` claim to
/// expand to 1 TiB (its `Elf64_Chdr.ch_size`).
fn inflate_compressed_section(path: &Path) {
    use object::read::elf::{FileHeader, SectionHeader};
    let mut bytes = std::fs::read(path).unwrap();
    let (offset, endian) = {
        let header = object::elf::FileHeader64::<object::Endianness>::parse(&*bytes).unwrap();
        let endian = header.endian().unwrap();
        let sections = header.sections(endian, &*bytes).unwrap();
        let compressed = sections
            .iter()
            .find(|s| s.sh_flags(endian).0 & object::elf::SHF_COMPRESSED.0 != 0)
            .expect("a compressed section (built with -gz)");
        (compressed.sh_offset(endian) as usize, endian)
    };
    // Elf64_Chdr: ch_type (4), ch_reserved (4), ch_size (8), ch_addralign (8).
    let size = if endian == object::Endianness::Little {
        (1u64 << 40).to_le_bytes()
    } else {
        (1u64 << 40).to_be_bytes()
    };
    bytes[offset + 8..offset + 16].copy_from_slice(&size);
    std::fs::write(path, bytes).unwrap();
}

/// The child side of a library whose compressed debug information claims
/// 1 TiB: backtraces through it name its frames by their symbols.
fn inflated(dir: &Path) -> String {
    let (_m, bt) = run_callback_site(&dir.join("inflated.so"), 0);
    format!("named={}", bt.matches("inflated_site").count())
}

#[test]
fn debug_sections_claiming_absurd_sizes_give_frames_without_lines() {
    let dir = workdir("inflated");
    let lib = dir.join("inflated.so");
    build_callback_site(&dir, "inflated", 16, &["-g", "-gz=zlib"], &lib);
    inflate_compressed_section(&lib);
    let out = in_child("inflated", dir.as_os_str().as_bytes(), &[]);
    assert_eq!(out, "ok named=2");
}

/// The child side of an absurd `TVM_TRACEBACK_LIMIT`: a backtrace through
/// 200 frames of `dir/deep.so` shows them all.
fn deep_limit(dir: &Path) -> String {
    let (_m, bt) = run_callback_site(&dir.join("deep.so"), 200);
    format!("frames_over_100={}", bt.matches("deep_site").count() > 100)
}

#[test]
fn an_absurd_traceback_limit_is_bounded() {
    let dir = workdir("deep-limit");
    build_callback_site(&dir, "deep", 16, &[], &dir.join("deep.so"));
    let limit = [("TVM_TRACEBACK_LIMIT", Path::new("1000000000000"))];
    let out = in_child("deep-limit", dir.as_os_str().as_bytes(), &limit);
    assert_eq!(out, "ok frames_over_100=true");
}
