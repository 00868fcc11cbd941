//! A program with the runtime linked in (this test, on the rlib, as a Rust
//! host on `tvmffi-host` or a C program on `libtvm_ffi.a`) loads extensions
//! that carry `NEEDED libtvm_ffi.so`: the soname stub stands for the shared
//! library, whatever is on the loader path, and every symbol the shared
//! library exports binds to the program's own definition.
#![cfg(target_os = "linux")]

mod common;

use core::ffi::{CStr, c_void};
use object::{Object, ObjectSymbol};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use tvm_ffi::runtime::registry::get_global;
use tvm_ffi::runtime::{TextKind, make_text};

/// The official wheel's C++ test extension (built with the official
/// headers, `NEEDED libtvm_ffi.so`), when `TVM_FFI_OFFICIAL_DIR` names it.
fn official_extension() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("TVM_FFI_OFFICIAL_DIR")?);
    Some(dir.join("lib/libtvm_ffi_testing.so"))
}

/// The names of every object loaded in this process.
fn loaded_objects() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> i32 {
        // SAFETY: the loader's entry, and the vector below.
        let (info, names) = unsafe { (&*info, &mut *data.cast::<Vec<String>>()) };
        if !info.dlpi_name.is_null() {
            // SAFETY: a NUL-terminated name owned by the loader.
            names.push(
                unsafe { CStr::from_ptr(info.dlpi_name) }
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        0
    }
    // SAFETY: the callback keeps to the loader's contract.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut names).cast()) };
    names
}

/// Loads the official extension and calls through it: a global its static
/// initialiser registered, one that raises, and one that calls back.
fn load_and_call(lib: &Path) -> String {
    tvm_ffi::module::load_from_file(lib.as_os_str().as_bytes()).expect("the extension loads");
    let echo = get_global(b"testing.echo").expect("registered when the library loaded");
    let hello = make_text(b"hello", TextKind::Str);
    let echoed = echo.call(&[hello.view()]).unwrap();
    let raise = get_global(b"testing.test_raise_error").unwrap();
    let kind = make_text(b"ValueError", TextKind::Str);
    let message = make_text(b"from C++", TextKind::Str);
    let raised = raise.call(&[kind.view(), message.view()]).unwrap_err();
    let echoed = echoed
        .view()
        .as_str_bytes()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    format!("echo={echoed:?} raised={raised}")
}

#[test]
fn an_official_cpp_extension_binds_to_the_linked_runtime() {
    let Some(lib) = official_extension() else {
        eprintln!("TVM_FFI_OFFICIAL_DIR is not set: skipped");
        return;
    };
    assert_eq!(
        load_and_call(&lib),
        "echo=Some(\"hello\") raised=ValueError: from C++"
    );
    let official_runtime = lib.with_file_name("libtvm_ffi.so");
    let official = official_runtime.to_string_lossy();
    assert!(
        !loaded_objects().iter().any(|n| *n == *official),
        "the official runtime was mapped: {:?}",
        loaded_objects()
    );
}

/// The same with the official runtime's directory on `LD_LIBRARY_PATH`
/// (read when a process starts: a child of this test runs it).
#[test]
fn the_loader_path_does_not_bring_in_another_runtime() {
    let Some(lib) = official_extension() else {
        return;
    };
    if std::env::var_os("STATIC_HOST_CHILD").is_some() {
        let official = lib
            .with_file_name("libtvm_ffi.so")
            .to_string_lossy()
            .into_owned();
        println!("child: {}", load_and_call(&lib));
        println!(
            "child: official mapped={}",
            loaded_objects().contains(&official)
        );
        return;
    }
    let out = common::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_loader_path_does_not_bring_in_another_runtime",
            "--nocapture",
        ])
        .env("STATIC_HOST_CHILD", "1")
        .env("LD_LIBRARY_PATH", lib.parent().unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("child: "))
        .collect();
    assert_eq!(
        lines,
        [
            "child: echo=Some(\"hello\") raised=ValueError: from C++",
            "child: official mapped=false"
        ]
    );
}

/// Every symbol the shared library exports resolves, through the stub, to
/// a definition inside this program.
#[test]
fn the_stub_defines_every_symbol_the_shared_library_exports() {
    let Some(lib) = official_extension() else {
        return;
    };
    // A library load brings the stub in.
    tvm_ffi::module::load_from_file(lib.as_os_str().as_bytes()).unwrap();
    let exe = std::env::current_exe().unwrap();
    let cdylib = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("libtvm_ffi.so");
    let bytes = std::fs::read(&cdylib).expect("the cdylib beside the tests");
    let file = object::File::parse(&*bytes).unwrap();
    // SAFETY: RTLD_NOLOAD takes a reference to the loaded stub, or fails.
    let stub = unsafe {
        libc::dlopen(
            c"libtvm_ffi.so".as_ptr(),
            libc::RTLD_LAZY | libc::RTLD_NOLOAD,
        )
    };
    assert!(!stub.is_null(), "no libtvm_ffi.so is loaded");
    let mut missing = Vec::new();
    let mut count = 0;
    for sym in file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
    {
        let name = sym.name().unwrap();
        count += 1;
        let cname = CString::new(name).unwrap();
        // SAFETY: a live handle and a NUL-terminated name.
        let addr = unsafe { libc::dlsym(stub, cname.as_ptr()) };
        // SAFETY: an all-zero Dl_info is a valid value to be filled in.
        let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
        // SAFETY: dladdr fills `info` for any address.
        let found = !addr.is_null() && unsafe { libc::dladdr(addr, &mut info) } != 0;
        // SAFETY: dli_fname is a NUL-terminated path when dladdr succeeds.
        let object = found.then(|| unsafe { CStr::from_ptr(info.dli_fname) }.to_owned());
        if object.as_deref().map(CStr::to_bytes) != Some(exe.as_os_str().as_bytes()) {
            missing.push(format!("{name} -> {object:?}"));
        }
    }
    // SAFETY: the reference taken above.
    unsafe { libc::dlclose(stub) };
    assert!(count > 90, "{count} exports");
    assert!(
        missing.is_empty(),
        "not bound into the program: {missing:#?}"
    );
}

/// Builds a library that needs nothing from any runtime (no `NEEDED
/// libtvm_ffi.so`) with one function, `__tvm_ffi_seven`.
fn standalone_library(dir: &Path) -> PathBuf {
    let src = dir.join("standalone.c");
    let out = dir.join("standalone.so");
    std::fs::write(
        &src,
        "typedef struct { int type_index; int pad; long long v; } Any;\n\
         int __tvm_ffi_seven(void* s, const Any* a, int n, Any* r) {\n\
         r->type_index = 1; r->pad = 0; r->v = 7; return 0; }\n",
    )
    .unwrap();
    let status = common::c_compiler()
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// Blocks `memfd_create` for this process (seccomp answers EPERM), as a
/// sandbox may; whether it is blocked now (an emulator running this test
/// may not take the filter, or apply it to the host's system calls).
fn block_memfd_create() -> bool {
    // The filter: the system call number; memfd_create fails with EPERM,
    // everything else runs.
    let filter = [
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::SYS_memfd_create as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    let program = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: installs a filter for this process; `program` outlives the
    // call; the probe's descriptor, if any, is closed.
    unsafe {
        let installed = libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &program as *const libc::sock_fprog,
            ) == 0;
        let probe = libc::memfd_create(c"probe".as_ptr(), 0);
        if probe >= 0 {
            libc::close(probe);
        }
        installed && probe < 0
    }
}

/// What loading `lib` answers: `ok` or the error's message.
fn try_load(lib: &Path) -> String {
    match tvm_ffi::module::load_from_file(lib.as_os_str().as_bytes()) {
        Ok(_) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

/// The child side of the tests below: `STATIC_HOST_CASE` names the case,
/// `STATIC_HOST_STANDALONE` the library that needs no runtime.
#[test]
fn static_host_case() {
    let (Ok(case), Some(lib)) = (std::env::var("STATIC_HOST_CASE"), official_extension()) else {
        return;
    };
    let standalone = PathBuf::from(std::env::var_os("STATIC_HOST_STANDALONE").unwrap());
    match case.as_str() {
        "no-stub" => {
            if !block_memfd_create() {
                println!("child: skipped");
                return;
            }
        }
        "foreign" => {
            let official =
                std::ffi::CString::new(lib.with_file_name("libtvm_ffi.so").as_os_str().as_bytes())
                    .unwrap();
            // SAFETY: loads the official runtime (its initialisers register
            // its own globals there), as a program may before the first load.
            let handle =
                unsafe { libc::dlopen(official.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
            assert!(!handle.is_null());
        }
        other => panic!("unknown case {other}"),
    }
    println!("child: standalone: {}", try_load(&standalone));
    println!("child: extension: {}", try_load(&lib));
}

/// Runs [`static_host_case`] `case` in a child with `env`: its two lines.
fn static_host_child(case: &str, env: &[(&str, &std::ffi::OsStr)]) -> Vec<String> {
    let dir = common::workdir("static_host", case);
    let standalone = standalone_library(&dir);
    let mut cmd = common::target_command(std::env::current_exe().unwrap());
    cmd.args(["--exact", "static_host_case", "--nocapture"])
        .env("STATIC_HOST_CASE", case)
        .env("STATIC_HOST_STANDALONE", &standalone);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("child: "))
        .map(str::to_owned)
        .collect()
}

/// No stub can be made (no private directory, `memfd_create` blocked):
/// a library that needs no runtime still loads; one that needs
/// `libtvm_ffi.so` is refused, saying why.
#[test]
fn a_stub_that_cannot_be_made_refuses_only_libraries_that_need_one() {
    let Some(lib) = official_extension() else {
        return;
    };
    let lines = static_host_child("no-stub", &[("TMPDIR", "/nonexistent/tmp".as_ref())]);
    if lines == ["skipped"] {
        eprintln!("memfd_create cannot be blocked here (an emulator): skipped");
        return;
    }
    assert_eq!(lines[0], "standalone: ok");
    assert_eq!(
        lines[1],
        format!(
            "extension: InternalError: Check failed: (lib_handle_ != nullptr) is false: Failed \
             to load dynamic shared library {} : it needs libtvm_ffi.so, and cannot make the \
             libtvm_ffi.so stub: RuntimeError: refusing to make a private directory under \
             /nonexistent/tmp: cannot resolve /nonexistent/tmp: No such file or directory (os \
             error 2); set TMPDIR to a directory other users cannot write",
            lib.display()
        )
    );
}

/// Another `libtvm_ffi.so` (the official one) loaded before the first
/// load: a library needing one is refused with a clear error instead of
/// binding to that other runtime; one that needs none loads.
#[test]
fn a_foreign_runtime_loaded_first_is_named_not_bound_to() {
    let Some(lib) = official_extension() else {
        return;
    };
    let lines = static_host_child("foreign", &[]);
    assert_eq!(lines[0], "standalone: ok");
    let official = lib.with_file_name("libtvm_ffi.so");
    assert!(
        lines[1].contains(&format!(
            ": it needs libtvm_ffi.so, and this runtime is linked into the program, and \
             another libtvm_ffi.so ({}) was loaded before it could stand for it",
            official.display()
        )),
        "{}",
        lines[1]
    );
}
