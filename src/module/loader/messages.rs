//! The loader's messages, the same on every system: the reference's for a
//! library that cannot be loaded, and the system loader's for a file it
//! cannot open.

use crate::core::model::error::{Error, ErrorKind};
use std::path::Path;

/// The reference's message for a library that cannot be loaded.
pub(super) fn load_error(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InternalError,
        format!(
            "Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library {} {reason}",
            path.display()
        ),
    )
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
