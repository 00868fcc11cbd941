//! What Linux adds to the Unix route: memory files (`memfd.rs`), linking
//! an open descriptor through `/proc/self/fd`, the `noexec` mount flag, and
//! the soname stub that stands for this runtime (`soname.rs`).

pub(super) use super::memfd::{memfd, proc_name, seal};
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Why a library at `name` cannot bind to this runtime, when it needs
/// `libtvm_ffi.so` and no object can stand for this runtime under that
/// name (a library loaded by a bare name is found by the loader's search,
/// not read here: it is left to it).
pub(super) fn missing_runtime(name: &Path) -> Option<String> {
    let why = super::soname::provide(crate::BUILTIN_ABI_EXPORTS).err()?;
    (crate::platform::os::has_separator(name.as_os_str().as_bytes())
        && crate::platform::image::needs(name, super::soname::SONAME.to_bytes()))
    .then_some(why)
}

/// Makes `to` a hard link to the open file `file` (through its
/// `/proc/self/fd` entry: linking a descriptor directly needs a
/// capability).
pub(super) fn link_checked(file: &File, to: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths; linkat reads them only.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether the file system holding `file` is mounted `noexec`.
pub(super) fn on_noexec_mount(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero statvfs is a valid value to be filled in.
    let mut st: libc::statvfs = unsafe { core::mem::zeroed() };
    // SAFETY: a live descriptor and a buffer of the right type.
    let ok = unsafe { libc::fstatvfs(file.as_raw_fd(), &mut st) } == 0;
    ok && st.f_flag & libc::ST_NOEXEC != 0
}
