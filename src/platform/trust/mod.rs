//! Who besides this process's user can change a file or the directories on
//! its way: the loader maps a library from its real path only where nobody
//! else can rename something over it or rewrite it (else it loads a private
//! copy), and scratch space is only made where nobody else can swap it.
//!
//! A directory is safe when root or this process's user owns it and no one
//! else may write it, or the sticky bit keeps others from renaming or
//! removing entries they do not own (`/tmp`). A file is safe when root or
//! this user owns it and no one else may write it. Every directory the
//! path's resolution passes through is checked: the ancestors of the path
//! as given (so a symbolic link is judged by the directory holding it) and
//! of the path it resolves to.
//!
//! On Windows, ACLs rather than owners and modes say who may write, and no
//! ACL is read here: a directory chain passes when it resolves, and files
//! are not judged (the loader does not ask). What stands in there is the loader's hold on the file (see
//! `loader/windows.rs`: nobody can rewrite, replace or rename a library
//! between its check and its mapping, nor write it while it is mapped) and
//! the per-user `TEMP` directory, which only its user (and administrators)
//! may enter by default.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as system;
#[cfg(windows)]
use windows as system;

use crate::platform::failure::Failure;
use std::path::Path;

/// Why a file or directory is not safe from other users, for messages.
pub type Unsafe = String;

/// Checks that no other user can rename, replace or remove entries in
/// `dir` or in any directory its resolution passes through: each ancestor
/// of `dir` as spelled (made absolute) and, when links lead elsewhere, of
/// the directory it resolves to.
pub fn check_dir_chain(dir: &Path) -> Result<(), Unsafe> {
    let absolute =
        std::path::absolute(dir).map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    let resolved = std::fs::canonicalize(&absolute)
        .map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    for d in absolute.ancestors() {
        system::check_dir(d)?;
    }
    if resolved != absolute {
        for d in resolved.ancestors() {
            system::check_dir(d)?;
        }
    }
    Ok(())
}

/// Checks that no other user can change the file `path` (whose metadata is
/// `meta`) or rename something over it.
#[cfg(unix)]
pub fn check_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    system::check_file(path, meta)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    check_dir_chain(parent)
}

/// `mkdtemp` semantics without unsafe code: `$TMPDIR/tvm-ffi-rs-<64 random
/// bits>` made by one `mkdir` of mode 0700, which fails on any existing
/// entry (a directory or link planted under that name); another name is
/// drawn then. The bits come from the standard library's randomly keyed
/// hasher. `TMPDIR` itself must be safe from other users
/// (see [`check_dir_chain`]): in a directory others may write without the
/// sticky bit (or below one), another user could rename our directory away
/// and put theirs, with their library, in its place.
pub fn make_private_dir() -> crate::platform::failure::Result<std::path::PathBuf> {
    use std::hash::{BuildHasher, Hasher};
    let base = std::env::temp_dir();
    check_dir_chain(&base).map_err(|why| {
        Failure::runtime(format!(
            "refusing to make a private directory under {}: {why}; set TMPDIR to a directory \
             other users cannot write",
            base.display()
        ))
    })?;
    let mut last = None;
    for attempt in 0u32..64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(attempt);
        h.write_u32(std::process::id());
        let dir = base.join(format!("tvm-ffi-rs-{:016x}", h.finish()));
        match crate::platform::os::create_private_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(Failure::runtime(format!(
                    "cannot create a private directory under {}: {e}",
                    base.display()
                )));
            }
        }
    }
    Err(Failure::runtime(format!(
        "cannot create a private directory under {}: {}",
        base.display(),
        last.map_or_else(String::new, |e| e.to_string())
    )))
}
