//! Unix: owners and mode bits say who else may change a file or rename
//! entries of a directory.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Whether `meta`'s owner is root or this process's user.
fn owned_by_us(meta: &std::fs::Metadata) -> bool {
    // SAFETY: geteuid only reads the process's credentials.
    let euid = unsafe { libc::geteuid() };
    meta.uid() == 0 || meta.uid() == euid
}

/// Checks one directory (followed through links, as resolution does).
pub(super) fn check_dir(dir: &Path) -> Result<(), String> {
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

/// Checks that no other user owns or may write the file `path` (whose
/// metadata is `meta`).
pub(super) fn check_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{check_dir_chain, check_file};
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
