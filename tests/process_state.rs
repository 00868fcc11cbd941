//! State of the loader that a forked child, a full `TMPDIR` or a reused
//! descriptor could break, each tried in a child process (a crash or a
//! hang fails the test, not the harness):
//! - a child forked after a reload exits normally: the parent's private
//!   link to the reloaded file stays, and its mapping is not `(deleted)`;
//! - a reload with `TMPDIR` on a full file system loads from a memory file;
//! - a library loaded from a memory file keeps the descriptor that names it
//!   (`/proc/<pid>/fd/N`) for as long as it is mapped.
#![cfg(target_os = "linux")]

mod common;

use common::{build_versioned, load_version};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `dir` holds `v1.so` and `v2.so`: loads `v1` as `dir/lib.so`, renames
/// `v2` over it and loads that path again (a reload).
fn load_then_reload(dir: &Path) -> Result<(i64, i64), String> {
    let lib = dir.join("lib.so");
    std::fs::copy(dir.join("v1.so"), &lib).unwrap();
    let first = load_version(&lib)?.0;
    std::fs::rename(dir.join("v2.so"), &lib).unwrap();
    Ok((first, load_version(&lib)?.0))
}

/// The names the system loader gives the objects it has loaded.
fn loaded_names() -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = Vec::new();
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut core::ffi::c_void,
    ) -> i32 {
        // SAFETY: the loader's entry, and the vector below.
        let (info, names) = unsafe { (&*info, &mut *data.cast::<Vec<PathBuf>>()) };
        if !info.dlpi_name.is_null() {
            // SAFETY: a NUL-terminated name owned by the loader.
            let name = unsafe { core::ffi::CStr::from_ptr(info.dlpi_name) };
            names.push(std::ffi::OsStr::from_bytes(name.to_bytes()).into());
        }
        0
    }
    // SAFETY: the callback keeps to the loader's contract.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut names).cast()) };
    names
}

/// Fork: the child exits through `exit` (its `atexit` handlers run); the
/// parent's private link must outlive it.
fn forked_child_exits(dir: &Path) -> Result<String, String> {
    let (v1, v2) = load_then_reload(dir)?;
    let link = loaded_names()
        .into_iter()
        .find(|n| n.to_string_lossy().contains("tvm-ffi-rs-"))
        .ok_or("no private link is loaded")?;
    // SAFETY: this process runs one thread (--test-threads=1); the child
    // only exits.
    match unsafe { libc::fork() } {
        // SAFETY: the child exits normally, running its `atexit` handlers.
        0 => unsafe { libc::exit(0) },
        -1 => return Err("fork failed".into()),
        child => {
            let mut status = 0;
            // SAFETY: waits for the child just made.
            unsafe { libc::waitpid(child, &mut status, 0) };
        }
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let deleted = maps
        .lines()
        .any(|l| l.contains(&*link.to_string_lossy()) && l.ends_with("(deleted)"));
    Ok(format!(
        "versions {v1} {v2}, link kept {}, mapping deleted {deleted}",
        link.exists()
    ))
}

/// Mounts a small tmpfs at `dir` in a mount namespace of this process
/// (one of a new user namespace when this user may not mount) and fills
/// it; false where the system allows neither.
fn full_file_system_at(dir: &Path) -> bool {
    // SAFETY: plain system calls on this single-threaded process.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            let (uid, gid) = (libc::getuid(), libc::getgid());
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
                return false;
            }
            let _ = std::fs::write("/proc/self/setgroups", "deny");
            let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
            let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
        }
        let private = libc::mount(
            core::ptr::null(),
            c"/".as_ptr(),
            core::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            core::ptr::null(),
        );
        let target = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        if private != 0
            || libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                c"size=64k".as_ptr().cast(),
            ) != 0
        {
            return false;
        }
    }
    let mut filler = std::fs::File::create(dir.join("filler")).unwrap();
    while std::io::Write::write(&mut filler, &[0u8; 4096]).is_ok_and(|n| n > 0) {}
    true
}

/// A reload with `TMPDIR` on a full file system.
fn reload_with_full_tmpdir(dir: &Path) -> Result<String, String> {
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    if !full_file_system_at(&tmp) {
        return Ok("skipped: no mount namespace".into());
    }
    // SAFETY: this process runs one thread (--test-threads=1).
    unsafe { std::env::set_var("TMPDIR", &tmp) };
    let (v1, v2) = load_then_reload(dir)?;
    Ok(format!("versions {v1} {v2}"))
}

/// A reload without a usable `TMPDIR`: from a memory file, named
/// `/proc/<pid>/fd/N`; that descriptor must still name the memory file.
fn memory_file_keeps_its_name(dir: &Path) -> Result<String, String> {
    let (v1, v2) = load_then_reload(dir)?;
    let prefix = format!("/proc/{}/fd/", std::process::id());
    let name = loaded_names()
        .into_iter()
        .find(|n| n.to_string_lossy().starts_with(&prefix))
        .ok_or("not loaded from a memory file")?;
    // Descriptors opened since would take a closed one's number.
    let _others: Vec<_> = (0..4)
        .map(|_| std::fs::File::open("/dev/null").unwrap())
        .collect();
    let target = std::fs::read_link(&name).map_or_else(
        |e| format!("unreadable ({e})"),
        |t| {
            let t = t.to_string_lossy().into_owned();
            if t.starts_with("/memfd:") {
                "a memory file".to_string()
            } else {
                t
            }
        },
    );
    Ok(format!("versions {v1} {v2}, its name is {target}"))
}

/// The child side: runs the case named by the environment and prints one
/// `RESULT:` line. Does nothing when run as an ordinary test.
#[test]
fn state_probe() {
    let Ok(case) = std::env::var("HOSTILE_CASE") else {
        return;
    };
    let arg = std::env::var_os("HOSTILE_ARG").unwrap();
    let dir = Path::new(&arg);
    let result = match case.as_str() {
        "fork" => forked_child_exits(dir),
        "full-tmpdir" => reload_with_full_tmpdir(dir),
        "memory-file" => memory_file_keeps_its_name(dir),
        other => panic!("unknown case {other}"),
    };
    common::print_result(&match result {
        Ok(detail) => format!("ok {detail}"),
        Err(e) => format!("err {e}"),
    });
}

/// A directory `name` holding the two versions of the library.
fn two_versions(name: &str) -> PathBuf {
    let dir = common::workdir("process_state", name);
    build_versioned(&dir, 1, &dir.join("v1.so"));
    build_versioned(&dir, 2, &dir.join("v2.so"));
    dir
}

fn run(case: &str, dir: &Path, env: &[(&str, &Path)]) -> String {
    common::in_child("state_probe", case, dir.as_os_str().as_bytes(), env)
}

#[test]
fn a_forked_child_leaves_the_parents_private_links() {
    let dir = two_versions("fork");
    assert_eq!(
        run("fork", &dir, &[]),
        "ok versions 1 2, link kept true, mapping deleted false"
    );
}

#[test]
fn a_reload_with_a_full_tmpdir_loads_from_a_memory_file() {
    let dir = two_versions("full");
    let got = run("full-tmpdir", &dir, &[]);
    if got == "ok skipped: no mount namespace" {
        eprintln!("no mount namespace here: skipped");
        return;
    }
    assert_eq!(got, "ok versions 1 2");
}

#[test]
fn a_memory_file_keeps_the_descriptor_that_names_it() {
    let dir = two_versions("memfd");
    let no_tmp = dir.join("no-such-dir");
    assert_eq!(
        run("memory-file", &dir, &[("TMPDIR", &no_tmp)]),
        "ok versions 1 2, its name is a memory file"
    );
}
