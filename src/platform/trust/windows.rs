//! Windows: no ACL is read (see the folder's doc).

use std::path::Path;

/// On Windows: that the directory can be read (see the module doc).
pub(super) fn check_dir(dir: &Path) -> Result<(), String> {
    std::fs::metadata(dir)
        .map(drop)
        .map_err(|e| format!("cannot stat {}: {e}", dir.display()))
}
