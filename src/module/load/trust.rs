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
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why a file or directory is not safe from other users, for messages.
pub type Unsafe = String;

/// Whether `meta`'s owner is root or this process's user.
#[cfg(unix)]
fn owned_by_us(meta: &std::fs::Metadata) -> bool {
    // SAFETY: geteuid only reads the process's credentials.
    let euid = unsafe { libc::geteuid() };
    meta.uid() == 0 || meta.uid() == euid
}

/// Checks one directory (followed through links, as resolution does).
#[cfg(unix)]
fn check_dir(dir: &Path) -> Result<(), Unsafe> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot stat {}: {e}", dir.display()))?;
    let others_write = meta.mode() & 0o022 != 0;
    let sticky = meta.mode() & 0o1000 != 0;
    if !owned_by_us(&meta) {
        return Err(format!(
            "{} belongs to another user (uid {})",
            dir.display(),
            meta.uid()
        ));
    }
    if others_write && !sticky {
        return Err(format!(
            "{} can be written by other users and has no sticky bit (mode {:o})",
            dir.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// On Windows: that the directory can be read (see the module doc).
#[cfg(windows)]
fn check_dir(dir: &Path) -> Result<(), Unsafe> {
    std::fs::metadata(dir)
        .map(drop)
        .map_err(|e| format!("cannot stat {}: {e}", dir.display()))
}

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
        check_dir(d)?;
    }
    if resolved != absolute {
        for d in resolved.ancestors() {
            check_dir(d)?;
        }
    }
    Ok(())
}

/// Checks that no other user can change the file `path` (whose metadata is
/// `meta`) or rename something over it.
#[cfg(unix)]
pub fn check_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    if !owned_by_us(meta) {
        return Err(format!(
            "{} belongs to another user (uid {})",
            path.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} can be written by other users (mode {:o})",
            path.display(),
            meta.mode() & 0o7777
        ));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    check_dir_chain(parent)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fresh(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tvm-ffi-trust-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    #[test]
    fn directories_others_can_write_without_the_sticky_bit_are_unsafe() {
        let dir = fresh("modes");
        let file = dir.join("lib.so");
        std::fs::write(&file, b"x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let meta = || std::fs::metadata(&file).unwrap();
        assert_eq!(check_file(&file, &meta()), Ok(()));
        // World-writable with the sticky bit (as /tmp): safe.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(check_file(&file, &meta()), Ok(()));
        // Without it: another user could rename a file over ours.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = check_file(&file, &meta()).unwrap_err();
        assert!(err.contains("no sticky bit (mode 777)"), "{err}");
        // A subdirectory of it is no safer: the parent can be renamed.
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(check_dir_chain(&sub).unwrap_err().contains("no sticky bit"));
        // A file others may write.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = check_file(&file, &meta()).unwrap_err();
        assert!(
            err.contains("can be written by other users (mode 666)"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_is_judged_by_the_directory_holding_it_and_by_its_target() {
        let open = fresh("open");
        let safe = fresh("safe");
        std::fs::create_dir(safe.join("real")).unwrap();
        std::os::unix::fs::symlink(safe.join("real"), open.join("link")).unwrap();
        assert_eq!(check_dir_chain(&open.join("link")), Ok(()));
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_dir_chain(&open.join("link")).is_err());
        std::fs::remove_dir_all(&open).unwrap();
        std::fs::remove_dir_all(&safe).unwrap();
    }
}
