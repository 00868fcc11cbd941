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
//!   that on Windows, see [`trust`](crate::module::trust)): the hold above
//!   is what keeps the checked file and the mapped one the same.
//! - The loader answers a path with the image it already has under that
//!   name, even if a new file was renamed into the path since. A path
//!   whose file changed while this process still maps the old one is
//!   refused with a message saying so; Unix loads a private copy there.
//! - The reference (`LoadLibraryW`) reports a failure without a reason;
//!   ours adds the system's.

use super::shared::{cannot_open, load_error, open_library_file};
use crate::core::model::error::Result;
use crate::module::image;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// The library type of this system's loader.
type Lib = libloading::os::windows::Library;

/// A library file's identity and version: size, creation and last write
/// times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::module) struct FileId {
    len: u64,
    created: u64,
    written: u64,
}

impl FileId {
    /// The identity of a file from its metadata.
    pub(in crate::module) fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::windows::fs::MetadataExt;
        FileId {
            len: m.file_size(),
            created: m.creation_time(),
            written: m.last_write_time(),
        }
    }

    /// The identity of the file at `path` now, if it can be read.
    pub(in crate::module) fn at(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId::of(&m))
    }
}

/// An open library, freed when dropped.
pub(in crate::module) struct Handle {
    lib: libloading::Library,
    /// The module handle (its base address).
    raw: usize,
}

impl Handle {
    /// A handle over an open library.
    pub(in crate::module) fn plain(lib: Lib) -> Handle {
        let raw = lib.into_raw();
        // SAFETY: the handle `into_raw` just gave back, owned again.
        let lib = unsafe { Lib::from_raw(raw) };
        Handle {
            lib: lib.into(),
            raw: raw as usize,
        }
    }

    /// The main program (whose own exports its symbols are).
    pub(in crate::module) fn this_program() -> Handle {
        // The main program's handle is always there to be had.
        Handle::plain(Lib::this().expect("the main program is loaded"))
    }

    /// The open library.
    pub(in crate::module) fn lib(&self) -> &libloading::Library {
        &self.lib
    }

    /// The module handle.
    pub(in crate::module) fn raw(&self) -> *mut core::ffi::c_void {
        self.raw as *mut core::ffi::c_void
    }
}

/// The version of each file this module mapped, by its absolute path.
static MAPPED: LazyLock<Mutex<HashMap<PathBuf, FileId>>> = LazyLock::new(Default::default);

/// `LoadLibraryExW(name)` (a bare name: the system's search order); errors
/// name `path`, the path the caller gave.
pub(in crate::module) fn dlopen(name: &Path, path: &Path) -> Result<Lib> {
    load_with_flags(name, path, 0)
}

fn load_with_flags(name: &Path, path: &Path, flags: u32) -> Result<Lib> {
    // SAFETY: loading a library runs its initialisers; that is what the
    // caller asks for.
    unsafe { Lib::load_with_flags(name, flags) }.map_err(|e| {
        let reason = std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
        load_error(path, format!("{}: {reason}", path.display()))
    })
}

/// Whether the loader has an image under the name `absolute`.
fn name_loaded(absolute: &Path) -> bool {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::System::LibraryLoader::{
        GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, GetModuleHandleExW,
    };
    let wide: Vec<u16> = absolute.as_os_str().encode_wide().chain([0]).collect();
    let mut module = core::ptr::null_mut();
    // SAFETY: a NUL-terminated name; the handle is written to `module` and
    // not counted.
    unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
            wide.as_ptr(),
            &mut module,
        ) != 0
    }
}

/// Opens the library file at `path`, checks it and maps it while holding
/// it (see the module doc). Answers the open library and the identity of
/// the file that was checked. Nothing is mapped and then refused here, so
/// `_discard` is never called.
pub(in crate::module) fn open(
    path: &Path,
    _discard: impl FnOnce(Handle),
) -> Result<(Handle, FileId)> {
    let (file, meta) = open_library_file(path)?;
    let id = FileId::of(&meta);
    image::check_loadable(path, &file, id.len).map_err(|e| load_error(path, e))?;
    let absolute =
        std::path::absolute(path).map_err(|e| load_error(path, cannot_open(path, &e)))?;
    let mut mapped = MAPPED.lock().unwrap_or_else(|e| e.into_inner());
    if mapped.get(&absolute).is_some_and(|&was| was != id) && name_loaded(&absolute) {
        return Err(load_error(
            path,
            "was replaced since it was loaded, and the system loader answers its path with the \
             old image while that is mapped: load the new file under another path",
        ));
    }
    const LOAD_WITH_ALTERED_SEARCH_PATH: u32 = 0x8;
    let lib = load_with_flags(&absolute, path, LOAD_WITH_ALTERED_SEARCH_PATH)?;
    drop(file);
    mapped.insert(absolute, id);
    Ok((Handle::plain(lib), id))
}
