//! How a library file named by a path reaches the system loader, on Unix.
//!
//! The file is opened once and checked through that descriptor (a regular
//! file; ELF headers and loadable segments within its length), then one of
//! three routes maps it:
//!
//! - **In place**, for a path's first load (the default): the system
//!   loader opens the real path, as on the reference, so gdb, perf,
//!   valgrind, sanitizers and `dladdr` see the library under its own name
//!   (also while its initialisers run), the page cache and the mount policy
//!   apply, `$ORIGIN` works, and no descriptor or copy is kept. The path
//!   must still name the checked file just before, and the mapped object
//!   must be that file afterwards: the same device and inode in
//!   `/proc/self/maps` (where `/proc` is mounted), the path and the open
//!   descriptor still showing the checked device, inode, size and
//!   modification time. Any difference is refused.
//! - **A private link**, for a reload: a path whose file is not the one
//!   this process already maps from it (the reference answers such a path
//!   with the old image; ours loads the new file). The loader is handed a
//!   hard link to the checked inode in this process's private directory
//!   (one per process, made on the first reload, under the file's own
//!   name), so it maps exactly the file that was checked, without a copy,
//!   whatever is renamed over the path meanwhile (a file renamed in during
//!   the loader's own open, cut short or not, never reaches it). Where no
//!   link can be made (the private directory on another file system, a
//!   file of another user under `fs.protected_hardlinks`), a private copy.
//! - **A private copy**, where the real path cannot be trusted: a directory
//!   on its way another user can write without the sticky bit, a file
//!   another user owns or may write ([`trust`]); a file
//!   rewritten in place since it was mapped (the loader would hand back the
//!   old image for that inode); or every file when `TVM_FFI_LOAD_PRIVATE=1`.
//!   The checked bytes are copied into a fresh private directory under the
//!   same file name, checked again and loaded from there. Without a usable
//!   `TMPDIR` (none, mounted `noexec`, or full), the copy is a sealed
//!   anonymous memory file loaded as `/proc/<pid>/fd/N`, its descriptor
//!   kept open while the image is mapped so that the name stays its own.
//!
//! A private link or copy stays while it is mapped (tools read it by that
//! name; backtraces show the caller's path) and is removed when the image
//! is unloaded or the process exits.
//!
//! The limits of the in-place route, which only someone who may write the
//! directory can reach (the trust check leaves this user and root): the
//! file is shared, so rewriting it in place (`cp new.so lib.so`, not a
//! rename) while it loads or after changes the code that runs, as on the
//! reference (loading it again gives the new code, from a copy); and on a
//! path's first load, a file renamed over the path in the microseconds
//! between the last check and the loader's own open is mapped, its
//! initialisers run, before the comparison refuses it; one cut short there
//! can fault inside the system loader, as on the reference.
//! `TVM_FFI_LOAD_PRIVATE=1` closes both. Handing the loader the checked
//! descriptor (`/proc/<pid>/fd/N`) would close the second without a copy,
//! but then the loader and debuggers know the library by that name while it
//! loads: its initialisers' `dladdr` names `/proc`, and gdb loses its
//! breakpoints in it once the name is corrected afterwards.

#[cfg(not(target_os = "linux"))]
use super::elsewhere as system;
#[cfg(target_os = "linux")]
use super::linux as system;
use super::shared::{cannot_open, load_error, open_library_file};
use crate::platform::failure::Result;
use crate::platform::image;
use crate::platform::trust;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// A library file's identity and version: device, inode, size and
/// modification time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl FileId {
    /// The identity of a file from its metadata.
    pub(crate) fn of(m: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }

    /// The identity of the file at `path` now, if it can be read.
    pub(crate) fn at(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId::of(&m))
    }
}

/// An open library: closed, then its private copy removed and the name it
/// was opened by given back, when dropped.
pub(crate) struct Handle {
    lib: Option<libloading::Library>,
    /// The `dlopen` handle, for `dlinfo`.
    raw: usize,
    copy: Option<PrivateCopy>,
    spelled: Option<Vec<u8>>,
    /// The memory file a private copy was mapped from, open while the
    /// image is mapped: the loader, debuggers and the symbolizer name the
    /// image `/proc/<pid>/fd/N`, which must not come to name another file.
    memory_file: Option<File>,
}

impl Handle {
    /// A handle over an open library, with its private copy and the name
    /// it was opened by (when this module chose it).
    fn new(
        lib: libloading::os::unix::Library,
        copy: Option<PrivateCopy>,
        spelled: Option<Vec<u8>>,
    ) -> Handle {
        let raw = lib.into_raw();
        // SAFETY: the handle `into_raw` just gave back, owned again.
        let lib = unsafe { libloading::os::unix::Library::from_raw(raw) };
        Handle {
            lib: Some(lib.into()),
            raw: raw as usize,
            copy,
            spelled,
            memory_file: None,
        }
    }

    /// A handle over a library opened by a name no one else tracks (a bare
    /// name, the main program, a library this process built).
    pub(crate) fn plain(lib: libloading::os::unix::Library) -> Handle {
        Handle::new(lib, None, None)
    }

    /// The open library.
    pub(crate) fn lib(&self) -> &libloading::Library {
        self.lib.as_ref().expect("present until dropped")
    }

    /// The main program and the libraries it loaded globally
    /// (`dlopen(NULL)`).
    pub(crate) fn this_program() -> Handle {
        Handle::plain(libloading::os::unix::Library::this())
    }

    /// The raw `dlopen` handle.
    pub(crate) fn raw(&self) -> *mut core::ffi::c_void {
        self.raw as *mut core::ffi::c_void
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        drop(self.lib.take());
        drop(self.copy.take());
        drop(self.memory_file.take());
        if let Some(name) = self.spelled.take() {
            lock(&SPELLINGS_IN_USE).remove(&name);
        }
    }
}

/// Locks a table whose every change leaves it valid (so a poisoned lock is
/// reusable).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `dlopen(name)` (`RTLD_LAZY | RTLD_LOCAL`); errors name `path`, the path
/// the caller gave, wherever `dlerror` named `name`.
pub(crate) fn dlopen(name: &Path, path: &Path) -> Result<libloading::os::unix::Library> {
    // Where no object can stand for this runtime as libtvm_ffi.so, only a
    // library that needs one is refused (a library loaded by a bare name
    // is found by the loader's search, not read here: it is left to it).
    if let Some(why) = system::missing_runtime(name) {
        return Err(load_error(
            path,
            format!(": it needs libtvm_ffi.so, and {why}"),
        ));
    }
    // SAFETY: loading a library runs its initialisers; that is what the
    // caller asks for.
    unsafe { libloading::os::unix::Library::open(Some(name), libc::RTLD_LAZY | libc::RTLD_LOCAL) }
        .map_err(|e| {
            let reason =
                std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
            let reason = if name == path {
                reason
            } else {
                reason.replace(&*name.to_string_lossy(), &path.to_string_lossy())
            };
            load_error(path, reason)
        })
}

/// Names given to the loader for images still open, by this module: the
/// loader may answer a later `dlopen` of the same name with such an image
/// even when its own name for it differs (it remembers every name an image
/// was asked for).
static SPELLINGS_IN_USE: LazyLock<Mutex<HashSet<Vec<u8>>>> = LazyLock::new(Default::default);

/// The version of each file mapped in place, by `(dev, inode)`: the loader
/// hands back what it mapped for an inode whatever the file holds now, so
/// an inode rewritten since must be loaded from a copy.
static MAPPED_INODES: LazyLock<Mutex<HashMap<(u64, u64), FileId>>> =
    LazyLock::new(Default::default);

/// Libraries up to this size are read whole before they are checked.
const READ_WHOLE_LIMIT: u64 = 8 << 20;

/// Whether every library is loaded from a private copy
/// (`TVM_FFI_LOAD_PRIVATE=1`, read once).
fn private_mode() -> bool {
    static PRIVATE: LazyLock<bool> =
        LazyLock::new(|| std::env::var_os("TVM_FFI_LOAD_PRIVATE").is_some_and(|v| v == "1"));
    *PRIVATE
}

/// Opens the library file at `path` (which holds a `/`), checks it and maps
/// it by the route the module comment describes; `reload` says the path
/// already maps another file. Answers the open library and the identity of
/// the file that was checked. A library mapped but then refused (not the
/// file that was checked) is handed to `discard`: its initialisers ran and
/// may have registered code in it.
pub(crate) fn open(
    path: &Path,
    reload: bool,
    discard: impl FnOnce(Handle),
) -> Result<(Handle, FileId)> {
    let (file, meta) = open_library_file(path)?;
    let id = FileId::of(&meta);
    // A small file is read whole, once: the checks and a copy use the same
    // bytes. A larger one is checked through its descriptor.
    let bytes = if id.len <= READ_WHOLE_LIMIT {
        // One byte more than its size, to see it grow; read into
        // uninitialised capacity (no zeroing of what is read over).
        let mut bytes = Vec::with_capacity(id.len as usize + 1);
        std::io::Read::read_to_end(&mut std::io::Read::take(&file, id.len + 1), &mut bytes)
            .map_err(|e| load_error(path, cannot_open(path, &e)))?;
        if bytes.len() as u64 > id.len {
            return Err(load_error(
                path,
                "grew while it was being read; load it again",
            ));
        }
        image::check_loadable_bytes(path, &bytes).map_err(|e| load_error(path, e))?;
        Some(bytes)
    } else {
        image::check_loadable(path, &file, id.len).map_err(|e| load_error(path, e))?;
        None
    };
    let rewritten = lock(&MAPPED_INODES)
        .get(&(id.dev, id.ino))
        .is_some_and(|&was| was != id);
    let copy_because = if private_mode() {
        Some("TVM_FFI_LOAD_PRIVATE=1".to_string())
    } else if rewritten {
        Some("rewritten in place since it was loaded".to_string())
    } else {
        trust::check_file(path, &meta).err()
    };
    let Some(why) = copy_because else {
        let handle = if reload {
            match load_link(path, &file)? {
                Some(handle) => handle,
                None => load_copy(path, &file, bytes.as_deref())?,
            }
        } else {
            load_in_place(path, &file, id, discard)?
        };
        lock(&MAPPED_INODES).insert((id.dev, id.ino), id);
        return Ok((handle, id));
    };
    let handle = load_copy(path, &file, bytes.as_deref()).map_err(|e| {
        // A copy's $ORIGIN is its own directory: say so when that matters.
        let origin = bytes
            .as_deref()
            .map_or_else(|| image::uses_origin(&file), image::uses_origin_in);
        if origin {
            e.rewrap(|m| {
                format!(
                    "{m} (it is loaded from a private copy, {why}, and the copy's $ORIGIN is \
                     the copy's directory: load its $ORIGIN dependencies first)"
                )
            })
        } else {
            e
        }
    })?;
    Ok((handle, id))
}

/// The `n`th spelling of `path` (`n` = 0 is `path` itself): the same file,
/// a different string, of length logarithmic in `n`: the binary digits of
/// `n` written as `./` (1) and `/` (0) between the directory and the name.
fn spelling(path: &Path, n: usize) -> PathBuf {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return path.to_path_buf();
    };
    if n == 0 {
        return path.to_path_buf();
    }
    let mut bytes = dir.as_os_str().as_bytes().to_vec();
    bytes.push(b'/');
    for bit in (0..usize::BITS - n.leading_zeros()).rev() {
        bytes.extend_from_slice(if n >> bit & 1 == 1 { b"./" } else { b"/" });
    }
    bytes.extend_from_slice(name.as_bytes());
    PathBuf::from(std::ffi::OsStr::from_bytes(&bytes).to_owned())
}

/// The shortest spelling of `path` the loader would not answer with an
/// image it already has by that name, marked in use.
fn fresh_spelling(path: &Path) -> PathBuf {
    let mut in_use = lock(&SPELLINGS_IN_USE);
    let mut n = 0;
    loop {
        let name = spelling(path, n);
        let key = name.as_os_str().as_bytes();
        if !in_use.contains(key) && !image::name_loaded(&name) {
            in_use.insert(key.to_vec());
            return name;
        }
        n += 1;
    }
}

/// Gives the system loader the real path (by a spelling it has no image
/// for) if it still names the file checked as `id`, then checks that what
/// it mapped is that file, through the descriptor `file` and the path.
fn load_in_place(
    path: &Path,
    file: &File,
    id: FileId,
    discard: impl FnOnce(Handle),
) -> Result<Handle> {
    let replaced = || {
        load_error(
            path,
            "was replaced while it was being loaded; load it again",
        )
    };
    if FileId::at(path) != Some(id) {
        return Err(replaced());
    }
    let name = fresh_spelling(path);
    let spelled = name.as_os_str().as_bytes().to_vec();
    let lib = dlopen(&name, path).inspect_err(|_| {
        lock(&SPELLINGS_IN_USE).remove(&spelled);
    })?;
    let handle = Handle::new(lib, None, Some(spelled));
    let mapped = image::mapped_file(handle.raw());
    let now = (
        file.metadata().ok().map(|m| FileId::of(&m)),
        FileId::at(path),
    );
    let same = now == (Some(id), Some(id)) && mapped.is_none_or(|m| m == (id.dev, id.ino));
    if !same {
        discard(handle);
        return Err(replaced());
    }
    Ok(handle)
}

/// Loads the checked file `file` through a hard link to it in this
/// process's private link directory: the loader maps exactly the inode
/// that was checked, without a copy, whatever is renamed over `path`. None
/// where no link can be made (the private directory on another file
/// system, a file system without hard links, `fs.protected_hardlinks`
/// refusing a file of another user, no `/proc`): the caller copies instead.
fn load_link(path: &Path, file: &File) -> Result<Option<Handle>> {
    let name = path.file_name().unwrap_or(path.as_os_str());
    let link = {
        let mut links = lock(&LINKS);
        let Some(dir) = links.dir() else {
            return Ok(None);
        };
        loop {
            // The file's own name first, so tools show it; `name~N` while
            // earlier reloads of a file of that name are still mapped.
            let n = links.next.entry(name.to_os_string()).or_insert(0);
            let mut candidate = name.to_os_string();
            if *n > 0 {
                candidate.push(format!("~{n}"));
            }
            *n += 1;
            let link = dir.join(candidate);
            match system::link_checked(file, &link) {
                Ok(()) => break link,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => return Ok(None),
            }
        }
    };
    let kept = PrivateCopy::link(link.clone());
    let lib = dlopen(&link, path)?;
    crate::platform::backtrace::show_file_as(
        link.as_os_str().as_bytes(),
        path.as_os_str().as_bytes(),
    );
    Ok(Some(Handle::new(lib, Some(kept), None)))
}

/// This process's private directory for reloaded libraries' links and the
/// next free suffix of each file name in it.
struct Links {
    dir: Option<PathBuf>,
    next: HashMap<std::ffi::OsString, u64>,
}

static LINKS: LazyLock<Mutex<Links>> = LazyLock::new(|| {
    Mutex::new(Links {
        dir: None,
        next: HashMap::new(),
    })
});

impl Links {
    /// The directory, made on the first reload (one `mkdir`, not one per
    /// reload) and removed at exit; None where it cannot be made.
    fn dir(&mut self) -> Option<PathBuf> {
        if self.dir.is_none() {
            let made = crate::platform::trust::make_private_dir().ok()?;
            remove_at_exit(made.clone());
            self.dir = Some(made);
        }
        self.dir.clone()
    }
}

/// A private copy of, or link to, a library: removed when dropped (the
/// image unloaded), or at exit, by the process that made it only (a forked
/// child shares the parent's mappings and must leave its files be).
pub(crate) struct PrivateCopy {
    /// A copy's own directory, or a link in the shared link directory.
    path: PathBuf,
    is_link: bool,
    /// The process that made it.
    maker: u32,
}

/// Private directories still in use and the process that made each,
/// removed at exit by that process.
static LIVE_COPIES: Mutex<Vec<(PathBuf, u32)>> = Mutex::new(Vec::new());

/// The process that registered [`remove_live_copies`].
static REGISTERED_BY: AtomicU32 = AtomicU32::new(0);

/// Removes `dir` when this process exits, unless it is removed before.
fn remove_at_exit(dir: PathBuf) {
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        REGISTERED_BY.store(std::process::id(), Ordering::Relaxed);
        // SAFETY: registers a handler with no preconditions; atexit ties
        // it to this object, so it also runs if the object is unloaded.
        unsafe { libc::atexit(remove_live_copies) };
    });
    lock(&LIVE_COPIES).push((dir, std::process::id()));
}

impl PrivateCopy {
    /// A copy in its own directory `dir`, which goes with it.
    fn new(dir: PathBuf) -> PrivateCopy {
        remove_at_exit(dir.clone());
        PrivateCopy {
            path: dir,
            is_link: false,
            maker: std::process::id(),
        }
    }

    /// A link in the shared link directory (removed at exit with it).
    fn link(link: PathBuf) -> PrivateCopy {
        PrivateCopy {
            path: link,
            is_link: true,
            maker: std::process::id(),
        }
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        if self.maker != std::process::id() {
            return;
        }
        if self.is_link {
            let _ = std::fs::remove_file(&self.path);
        } else {
            lock(&LIVE_COPIES).retain(|(d, _)| d != &self.path);
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The `atexit` handler: removes the private directories this process
/// made. A forked child inherits the handler and the list, and removes
/// nothing of its parent's.
/// A child only tries the lock: a thread of the parent may have held it at
/// the fork, and no thread of the child will release it.
extern "C" fn remove_live_copies() {
    crate::platform::panic::contain_panic(|| {
        let me = std::process::id();
        let mut live = if REGISTERED_BY.load(Ordering::Relaxed) == me {
            lock(&LIVE_COPIES)
        } else {
            match LIVE_COPIES.try_lock() {
                Ok(live) => live,
                Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return,
            }
        };
        let dirs = core::mem::take(&mut *live);
        drop(live);
        for (dir, maker) in dirs {
            if maker == me {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    });
}

/// Copies `file` (or its checked `bytes`, when it was read whole) into a
/// fresh private directory under its own file name (else into an anonymous
/// memory file), checks the copy (the file may have changed since it was
/// checked) and loads it. A file the mount policy forbids to run is refused
/// as the system loader refuses it.
fn load_copy(path: &Path, file: &File, bytes: Option<&[u8]>) -> Result<Handle> {
    use std::io::{Seek, SeekFrom, Write};
    if system::on_noexec_mount(file) {
        return Err(load_error(
            path,
            format!(
                "{}: failed to map segment from shared object (its file system is mounted noexec)",
                path.display()
            ),
        ));
    }
    let failed = |e: std::io::Error| load_error(path, format!("cannot copy it: {e}"));
    let copy_into = |out: &mut File| -> Result<()> {
        if let Some(bytes) = bytes {
            return out.write_all(bytes).map_err(failed);
        }
        let mut from = file;
        from.seek(SeekFrom::Start(0)).map_err(failed)?;
        let len = std::io::copy(&mut from, out).map_err(failed)?;
        image::check_loadable(path, out, len).map_err(|e| load_error(path, e))
    };
    let file_name = path.file_name().unwrap_or(path.as_os_str());
    // A copy in a private directory, unless TMPDIR gives none, is mounted
    // noexec, or cannot hold it (a full file system): then a memory file.
    let mut in_dir_failed = None;
    if let Ok(dir) = crate::platform::trust::make_private_dir() {
        let copy_dir = PrivateCopy::new(dir);
        let copy = copy_dir.path.join(file_name);
        let written = crate::platform::os::create_new_file(&copy, 0o700)
            .map_err(failed)
            .and_then(|mut out| {
                if system::on_noexec_mount(&out) {
                    return Ok(false);
                }
                copy_into(&mut out)?;
                Ok(true)
            });
        match written {
            Ok(true) => {
                let lib = dlopen(&copy, path)?;
                crate::platform::backtrace::show_file_as(
                    copy.as_os_str().as_bytes(),
                    path.as_os_str().as_bytes(),
                );
                return Ok(Handle::new(lib, Some(copy_dir), None));
            }
            Ok(false) => {}
            Err(e) => in_dir_failed = Some(e),
        }
    }
    let mut copy = match system::memfd(path) {
        Ok(copy) => copy,
        Err(e) => return Err(in_dir_failed.unwrap_or_else(|| failed(e))),
    };
    copy_into(&mut copy)?;
    system::seal(&copy).map_err(failed)?;
    load_memfd(path, copy)
}

/// Loads a sealed memory file by `/proc/<pid>/fd/N` (a name other
/// processes, debuggers among them, resolve to the same file), kept open
/// while the image is mapped.
fn load_memfd(path: &Path, copy: File) -> Result<Handle> {
    let Some(name) = system::proc_name(&copy) else {
        return Err(load_error(
            path,
            "cannot make a private copy of it: TMPDIR gives no private directory and /proc is \
             not mounted",
        ));
    };
    let name = fresh_spelling(&name);
    let spelled = name.as_os_str().as_bytes().to_vec();
    let lib = dlopen(&name, path).inspect_err(|_| {
        lock(&SPELLINGS_IN_USE).remove(&spelled);
    })?;
    crate::platform::backtrace::show_file_as(&spelled, path.as_os_str().as_bytes());
    let mut handle = Handle::new(lib, None, Some(spelled));
    handle.memory_file = Some(copy);
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_are_distinct_and_short() {
        let path = Path::new("/d/lib.so");
        let names: Vec<_> = (0..2100).map(|n| spelling(path, n)).collect();
        let bytes = |n: usize| names[n].as_os_str().as_bytes();
        assert_eq!(bytes(0), b"/d/lib.so");
        assert_eq!(bytes(1), b"/d/./lib.so");
        assert_eq!(bytes(2), b"/d/.//lib.so");
        assert_eq!(bytes(3), b"/d/././lib.so");
        // Distinct as strings (what the loader compares), not as paths.
        let distinct: HashSet<_> = names.iter().map(|n| n.as_os_str().as_bytes()).collect();
        assert_eq!(distinct.len(), names.len());
        assert!(names.iter().all(|n| n.as_os_str().len() < 40));
        // Every spelling names the same file.
        let dir = std::env::temp_dir();
        let file = dir.join(format!("tvm-ffi-spell-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        for n in [1, 2, 5, 2099] {
            assert_eq!(std::fs::read(spelling(&file, n)).unwrap(), b"x");
        }
        std::fs::remove_file(&file).unwrap();
    }
}
