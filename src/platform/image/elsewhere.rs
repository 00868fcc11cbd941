//! Elsewhere (macOS), no walk of the loaded objects yet: the answers
//! are the conservative "cannot say". So a library's embedded blob and
//! context symbols are not used (loading it reports the symbol is not in a
//! loaded segment), and a released library is never unmapped.

use core::ffi::c_void;
use std::path::Path;

/// See the Linux version: `None`, the extent is unknown here.
pub fn mapped_extent(_addr: *const c_void, _need_write: bool) -> Option<usize> {
    None
}

/// See the Linux version: empty, the loader cannot say here.
pub fn segments_of(_handle: *mut c_void) -> Vec<core::ops::Range<usize>> {
    Vec::new()
}

/// See the Linux version: `false`, the loader cannot say here.
pub fn name_loaded(_name: &Path) -> bool {
    false
}

/// See the Linux version: `None`, no `/proc` here.
pub fn mapped_file(_handle: *mut c_void) -> Option<(u64, u64)> {
    None
}

/// See the Linux version: `None`, the loader cannot say here.
pub fn object_holding(
    _addr: usize,
) -> Option<(usize, Vec<core::ops::Range<usize>>, std::path::PathBuf)> {
    None
}

/// See the Linux version: `None`, the loader cannot say here.
pub fn object_end(_base: usize) -> Option<usize> {
    None
}

/// See the Linux version: `None`, the loader cannot say here.
pub fn loader_counts() -> Option<(u64, u64)> {
    None
}
