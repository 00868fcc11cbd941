//! Other Unix systems (macOS): no memory files, no `/proc` to link a
//! descriptor from or to name one by, mount flags not read, and no soname
//! stub (a library that needs `libtvm_ffi.so` finds the loaded one).

use std::fs::File;
use std::path::Path;

/// Nothing is refused here (see `linux.rs`).
pub(super) fn missing_runtime(_name: &Path) -> Option<String> {
    None
}

/// No `/proc`: a memory file has no name to load it by.
pub(super) fn proc_name(_file: &File) -> Option<std::path::PathBuf> {
    None
}

/// Outside Linux there are no memory files: a copy needs `TMPDIR`.
pub(super) fn memfd(_path: &Path) -> std::io::Result<File> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no private directory under TMPDIR and no memfd_create outside Linux",
    ))
}

/// Nothing to seal: see [`memfd`].
pub(super) fn seal(_copy: &File) -> std::io::Result<()> {
    Ok(())
}

/// Outside Linux there is no `/proc/self/fd` to link from: a reload copies.
pub(super) fn link_checked(_file: &File, _to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no /proc/self/fd to link a descriptor from",
    ))
}

/// Outside Linux the mount flags are not read here (macOS has no
/// `ST_NOEXEC` in `statvfs`): a private copy of a library on a `noexec`
/// mount is not refused there.
pub(super) fn on_noexec_mount(_file: &File) -> bool {
    false
}
