//! How a library file named by a path reaches the system loader, on
//! Windows.
//!
//! The file is opened once, without sharing write or delete access, and
//! held open so from its check (a regular file; PE headers and sections
//! within its length) until the loader has mapped it: while it is held,
//! nobody can rewrite it, rename something over it or rename it away, so
//! the image mapped is the file that was checked. Once mapped, the system
//! keeps an image file from being written. There is no private copy: the
//! loader maps the real path, which debuggers, profilers and
//! `GetModuleFileName` show, and its directory is searched first for the
//! libraries it needs (`LOAD_WITH_ALTERED_SEARCH_PATH`, the counterpart of
//! `$ORIGIN`; the path is made absolute for it).
//!
//! What differs from Unix, and why:
//! - Who may write the file or its directories is not checked (ACLs decide
//!   that on Windows, see [`trust`](crate::platform::trust)): the hold above
//!   is what keeps the checked file and the mapped one the same.
//! - The loader answers a path with the image it already has under that
//!   name, even if a new file was renamed into the path since: a path
//!   whose file changed while this process still maps the old one gives
//!   the old image, as on the reference (Unix maps the new file, from a
//!   private link or copy of exactly the bytes checked).
//! - A failure of the system loader is reported as the reference's
//!   `LoadLibraryW` failure is: "Failed to load dynamic shared library
//!   <path>", without the system's reason.

use super::shared::{cannot_open, load_error, open_library_file, system_refused};
use crate::platform::failure::Result;
use crate::platform::image;
use std::path::Path;

/// The library type of this system's loader.
type Lib = libloading::os::windows::Library;

/// A library file's identity and version: size, creation and last write
/// times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct FileId {
    len: u64,
    created: u64,
    written: u64,
}

impl FileId {
    /// The identity of a file from its metadata.
    pub(crate) fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::windows::fs::MetadataExt;
        FileId {
            len: m.file_size(),
            created: m.creation_time(),
            written: m.last_write_time(),
        }
    }

    /// The identity of the file at `path` now, if it can be read.
    pub(crate) fn at(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId::of(&m))
    }
}

/// An open library, freed when dropped.
pub(crate) struct Handle {
    lib: libloading::Library,
    /// The module handle (its base address).
    raw: usize,
}

impl Handle {
    /// A handle over an open library.
    pub(crate) fn plain(lib: Lib) -> Handle {
        let raw = lib.into_raw();
        // SAFETY: the handle `into_raw` just gave back, owned again.
        let lib = unsafe { Lib::from_raw(raw) };
        Handle {
            lib: lib.into(),
            raw: raw as usize,
        }
    }

    /// The main program (whose own exports its symbols are).
    pub(crate) fn this_program() -> Handle {
        // The main program's handle is always there to be had.
        Handle::plain(Lib::this().expect("the main program is loaded"))
    }

    /// The open library.
    pub(crate) fn lib(&self) -> &libloading::Library {
        &self.lib
    }

    /// The module handle.
    pub(crate) fn raw(&self) -> *mut core::ffi::c_void {
        self.raw as *mut core::ffi::c_void
    }
}

/// `LoadLibraryExW(name)` (a bare name: the system's search order); errors
/// name `path`, the path the caller gave.
pub(crate) fn dlopen(name: &Path, path: &Path) -> Result<Lib> {
    load_with_flags(name, path, 0)
}

fn load_with_flags(name: &Path, path: &Path, flags: u32) -> Result<Lib> {
    // SAFETY: loading a library runs its initialisers; that is what the
    // caller asks for.
    unsafe { Lib::load_with_flags(name, flags) }.map_err(|e| system_refused(path, e))
}

/// Opens the library file at `path`, checks it and maps it while holding
/// it (see the module doc). Answers the open library and the identity of
/// the file that was checked. Nothing is mapped and then refused here, so
/// `_discard` is never called; nor is a load ever a reload (`_reload`):
/// the loader answers a path it has mapped with that image.
pub(crate) fn open(
    path: &Path,
    _reload: bool,
    _discard: impl FnOnce(Handle),
) -> Result<(Handle, FileId)> {
    let (file, meta) = open_library_file(path)?;
    let id = FileId::of(&meta);
    image::check_loadable(path, &file, id.len).map_err(|e| load_error(path, e))?;
    let absolute =
        std::path::absolute(path).map_err(|e| system_refused(path, cannot_open(path, &e)))?;
    const LOAD_WITH_ALTERED_SEARCH_PATH: u32 = 0x8;
    let lib = load_with_flags(&absolute, path, LOAD_WITH_ALTERED_SEARCH_PATH)?;
    drop(file);
    Ok((Handle::plain(lib), id))
}
