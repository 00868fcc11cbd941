//! What every system's route shares: the reference's messages for a
//! library that cannot be loaded, the system loader's for a file it cannot
//! open, and opening the file to check.

use crate::platform::failure::{Failure, Result};
use crate::platform::image;
use std::fs::{File, Metadata};
use std::path::Path;

/// Opens the library file at `path` for its checks (see
/// [`image::open_regular`]), with the loader's messages for a file that
/// cannot be opened or is not regular.
pub(super) fn open_library_file(path: &Path) -> Result<(File, Metadata)> {
    image::open_regular(path)
        .map_err(|e| load_error(path, e))?
        .map_err(|e| system_refused(path, cannot_open(path, &e)))
}

/// The reference's message for a library the system cannot open or load,
/// with the system's `reason` where the reference gives it: `dlerror`'s
/// text on Unix; on Windows its `LoadLibraryW` failure names only the path,
/// and so does ours.
pub(super) fn system_refused(path: &Path, reason: impl std::fmt::Display) -> Failure {
    if cfg!(windows) {
        reference_error(format!("{}", path.display()))
    } else {
        load_error(path, reason)
    }
}

/// The reference's message for a library that cannot be loaded, with
/// `reason` after the path.
pub(super) fn load_error(path: &Path, reason: impl std::fmt::Display) -> Failure {
    reference_error(format!("{} {reason}", path.display()))
}

/// The reference's failed check for a library that cannot be loaded,
/// ending in `what`.
fn reference_error(what: String) -> Failure {
    Failure::internal(format!(
        "Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library {what}"
    ))
}

/// The loader's wording for a file it cannot open (`dlerror`'s).
pub(super) fn cannot_open(path: &Path, e: &std::io::Error) -> String {
    let reason = e.to_string();
    let reason = e
        .raw_os_error()
        .and_then(|code| reason.strip_suffix(&format!(" (os error {code})")))
        .unwrap_or(&reason);
    format!(
        "{}: cannot open shared object file: {reason}",
        path.display()
    )
}
