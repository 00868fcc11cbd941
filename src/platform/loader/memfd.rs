//! Anonymous memory files (Linux's `memfd_create`), sealed against change:
//! what a private copy of a library, or the soname stub, is loaded from
//! when no private directory will do.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A new anonymous memory file named after `path`, sealable.
pub(super) fn memfd(path: &Path) -> std::io::Result<File> {
    use std::os::fd::FromRawFd;
    let name = path.file_name().unwrap_or(path.as_os_str()).as_bytes();
    // A path holds no NUL, so neither does its file name.
    let name = std::ffi::CString::new(name).unwrap_or_default();
    // SAFETY: a NUL-terminated name; the flags are memfd_create's.
    let fd =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor memfd_create just made, owned from here on.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Seals a memory file against any change.
pub(super) fn seal(copy: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
    // SAFETY: adds seals to a memfd we own.
    if unsafe { libc::fcntl(copy.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The name other processes, debuggers among them, and the system loader
/// open a memory file by (`/proc/<pid>/fd/N`), or `None` without `/proc`.
pub(super) fn proc_name(file: &File) -> Option<std::path::PathBuf> {
    use std::os::fd::AsRawFd;
    let name = std::path::PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        file.as_raw_fd()
    ));
    name.exists().then_some(name)
}
