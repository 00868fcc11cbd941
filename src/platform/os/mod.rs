//! What differs between the operating systems below everything else: paths
//! as the C ABI's bytes, files created without following links, private
//! directories, positioned reads, the machine's memory and work at thread
//! exit.
//!
//! The C ABI passes paths as NUL-terminated bytes. On Unix they are the
//! path's bytes as they are; on Windows they are UTF-8 (as the reference's
//! `std::string` paths are, read by the C runtime's narrow-to-wide
//! conversion in UTF-8 mode), and bytes that are not UTF-8 are replaced
//! (U+FFFD), so such a path names no file rather than another one.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as system;
#[cfg(windows)]
use windows as system;

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

/// The largest alignment [`aligned_alloc`] serves.
pub const MAX_C_ALIGNMENT: usize = system::MAX_C_ALIGNMENT;

/// `size` bytes from the C runtime aligned to `alignment` (a power of two
/// up to [`MAX_C_ALIGNMENT`]), NULL when none are left; freed by [`free`].
///
/// # Safety
/// As C's `aligned_alloc`: `size` is a multiple of `alignment`.
pub unsafe fn aligned_alloc(alignment: usize, size: usize) -> *mut core::ffi::c_void {
    debug_assert!(alignment.is_power_of_two() && alignment <= MAX_C_ALIGNMENT);
    // SAFETY: by the caller's contract.
    unsafe { system::aligned_alloc(alignment, size) }
}

/// Frees a block of [`aligned_alloc`].
///
/// # Safety
/// `ptr` came from [`aligned_alloc`] and is freed once.
pub unsafe fn free(ptr: *mut core::ffi::c_void) {
    // SAFETY: by the caller's contract.
    unsafe { system::free(ptr) }
}

/// The CUDA driver's library names, tried in order.
pub const CUDA_DRIVER_NAMES: &[&str] = system::CUDA_DRIVER_NAMES;

/// NVRTC's library names, newest release first.
pub const NVRTC_NAMES: &[&str] = system::NVRTC_NAMES;

/// Starts a detached thread named `name` with a stack of `stack_size`
/// bytes running `f` (a panic in it is contained); false when the system
/// refuses. On Unix it is a bare `pthread_create`, not `std::thread`: the
/// standard library's thread start takes a process-wide lock (its
/// stack-overflow bookkeeping) that another thread may hold at a `fork`,
/// and a child forked then could never start a thread. Pool workers, which
/// a forked child starts anew, use this.
pub fn spawn_detached(name: &str, stack_size: usize, f: Box<dyn FnOnce() + Send>) -> bool {
    system::spawn_detached(name, stack_size, f)
}

/// The path a C string names (see the module doc for Windows).
pub fn path_from_bytes(bytes: &[u8]) -> Cow<'_, Path> {
    system::path_from_bytes(bytes)
}

/// A path's bytes, as the C ABI passes them (UTF-8 on Windows, lossy for a
/// name that is not valid Unicode).
pub fn path_bytes(path: &Path) -> Cow<'_, [u8]> {
    system::path_bytes(path)
}

/// Whether a path names a file by its directory (holds a separator), rather
/// than a bare name for the system loader's search.
pub fn has_separator(path: &[u8]) -> bool {
    path.iter().any(|b| system::SEPARATORS.contains(b))
}

/// Creates the file `path`, new (never an existing file, and never through
/// a link planted under its name), readable and writable by this user,
/// with Unix permission bits `mode` (on Windows, CREATE_NEW fails on any
/// existing entry, a link included, and the file takes its directory's
/// ACL: the user's own under TEMP).
pub fn create_new_file(path: &Path, mode: u32) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    system::create_new(&mut options, mode);
    options.open(path)
}

/// Creates the directory `path`, new, that only this user may enter (mode
/// 0700 on Unix; on Windows it inherits its parent's ACL).
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    system::private_dir(&mut builder);
    builder.create(path)
}

/// Opens `path` for reading without blocking on it (a FIFO on Unix) and,
/// on Windows, without sharing write or delete access: while it is open
/// nobody can rewrite, replace or rename the file.
pub fn open_for_check(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    system::for_check(&mut options);
    options.open(path)
}

/// A word for what a file that is not regular is, for messages.
pub fn file_type_name(t: std::fs::FileType) -> &'static str {
    if let Some(name) = system::special_file_name(t) {
        name
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Reads from `file` at `offset` into `buf`, without moving a cursor
/// others share (on Windows the file's cursor moves; nobody else reads
/// through these descriptors).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    system::read_at(file, buf, offset)
}

/// The machine's physical memory in bytes, where the system says.
pub fn physical_memory() -> Option<u64> {
    system::physical_memory()
}

/// Work a thread leaves for its own exit: [`AtThreadExit::arm`] has `run`
/// called when the calling thread exits, after its C++ `thread_local` and
/// Rust thread-local destructors (which may still call into this library),
/// and again when a later exit destructor arms it anew.
pub struct AtThreadExit {
    run: fn(),
    key: system::ExitKey,
}

impl AtThreadExit {
    /// Work that runs `run` at the exit of each thread that armed it.
    pub const fn new(run: fn()) -> AtThreadExit {
        AtThreadExit {
            run,
            key: system::ExitKey::new(),
        }
    }

    /// Has `run` called when this thread exits. On Unix a `pthread_key`
    /// destructor does it: the system runs those after every thread-local
    /// destructor, and again (up to four rounds) for keys set meanwhile, so
    /// arming it from a destructor at exit works too. Elsewhere a
    /// thread-local destructor does it; arming after that one ran does
    /// nothing.
    pub fn arm(&'static self) {
        self.key.arm(self.run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_bytes() {
        let p = path_from_bytes(b"dir/lib.so");
        assert_eq!(&*path_bytes(&p), b"dir/lib.so");
        assert!(has_separator(b"a/b") && !has_separator(b"libc.so.6"));
        assert!(physical_memory().is_some_and(|m| m > 1 << 20));
    }
}
