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

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

/// The path a C string names (see the module doc for Windows).
pub fn path_from_bytes(bytes: &[u8]) -> Cow<'_, Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(Path::new(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => Cow::Borrowed(Path::new(s)),
        Cow::Owned(s) => Cow::Owned(s.into()),
    }
}

/// A path's bytes, as the C ABI passes them (UTF-8 on Windows, lossy for a
/// name that is not valid Unicode).
pub fn path_bytes(path: &Path) -> Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(path.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    match path.to_string_lossy() {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

/// Whether a path names a file by its directory (holds a separator), rather
/// than a bare name for the system loader's search.
pub fn has_separator(path: &[u8]) -> bool {
    path.contains(&b'/') || (cfg!(windows) && path.contains(&b'\\'))
}

/// Creates the file `path`, new (never an existing file, and never through
/// a link planted under its name), readable and writable by this user,
/// with Unix permission bits `mode`.
pub fn create_new_file(path: &Path, mode: u32) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode).custom_flags(libc::O_NOFOLLOW);
    }
    // Windows: CREATE_NEW fails on any existing entry, a link included;
    // the new file takes its directory's ACL (the user's own under TEMP).
    #[cfg(not(unix))]
    let _ = mode;
    options.open(path)
}

/// Creates the directory `path`, new, that only this user may enter (mode
/// 0700 on Unix; on Windows it inherits its parent's ACL).
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}

/// Opens `path` for reading without blocking on it (a FIFO on Unix) and,
/// on Windows, without sharing write or delete access: while it is open
/// nobody can rewrite, replace or rename the file.
pub fn open_for_check(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const FILE_SHARE_READ: u32 = 1;
        options.share_mode(FILE_SHARE_READ);
    }
    options.open(path)
}

/// A word for what a file that is not regular is, for messages.
pub fn file_type_name(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        } else if t.is_char_device() {
            return "a character device";
        } else if t.is_block_device() {
            return "a block device";
        } else if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Reads from `file` at `offset` into `buf`, without moving a cursor
/// others share (on Windows the file's cursor moves; nobody else reads
/// through these descriptors).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// The machine's physical memory in bytes, where the system says.
pub fn physical_memory() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf only reads system settings.
        let (pages, size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let (pages, size) = (u64::try_from(pages).ok()?, u64::try_from(size).ok()?);
        Some(pages.saturating_mul(size))
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
        // SAFETY: an all-zero MEMORYSTATUSEX is a valid value to fill in.
        let mut status: MEMORYSTATUSEX = unsafe { core::mem::zeroed() };
        status.dwLength = size_of::<MEMORYSTATUSEX>() as u32;
        // SAFETY: a buffer of the right type with its length set.
        (unsafe { GlobalMemoryStatusEx(&mut status) } != 0).then_some(status.ullTotalPhys)
    }
}

/// Work a thread leaves for its own exit: [`AtThreadExit::arm`] has `run`
/// called when the calling thread exits, after its C++ `thread_local` and
/// Rust thread-local destructors (which may still call into this library),
/// and again when a later exit destructor arms it anew.
pub struct AtThreadExit {
    run: fn(),
    #[cfg(unix)]
    key: std::sync::OnceLock<Option<libc::pthread_key_t>>,
}

impl AtThreadExit {
    /// Work that runs `run` at the exit of each thread that armed it.
    pub const fn new(run: fn()) -> AtThreadExit {
        AtThreadExit {
            run,
            #[cfg(unix)]
            key: std::sync::OnceLock::new(),
        }
    }

    /// Has `run` called when this thread exits. On Unix a `pthread_key`
    /// destructor does it: the system runs those after every thread-local
    /// destructor, and again (up to four rounds) for keys set meanwhile, so
    /// arming it from a destructor at exit works too. Elsewhere a
    /// thread-local destructor does it; arming after that one ran does
    /// nothing.
    pub fn arm(&'static self) {
        #[cfg(unix)]
        {
            /// The key's destructor: its value is the armed `AtThreadExit`.
            unsafe extern "C" fn on_exit(armed: *mut core::ffi::c_void) {
                // SAFETY: the key's only values are `&'static AtThreadExit`.
                (unsafe { &*armed.cast::<AtThreadExit>() }.run)();
            }
            let key = self.key.get_or_init(|| {
                let mut key = 0;
                // SAFETY: creates a key with a destructor of the right type.
                (unsafe { libc::pthread_key_create(&mut key, Some(on_exit)) } == 0).then_some(key)
            });
            if let Some(key) = *key {
                // SAFETY: a live key; the value is a static, never freed.
                unsafe { libc::pthread_setspecific(key, (self as *const Self).cast()) };
            }
        }
        #[cfg(not(unix))]
        {
            /// The armed work of this thread, run when it is dropped.
            struct Armed(core::cell::RefCell<Vec<&'static AtThreadExit>>);
            impl Drop for Armed {
                fn drop(&mut self) {
                    for work in self.0.take() {
                        (work.run)();
                    }
                }
            }
            thread_local! {
                static ARMED: Armed = const { Armed(core::cell::RefCell::new(Vec::new())) };
            }
            let _ = ARMED.try_with(|armed| {
                let mut armed = armed.0.borrow_mut();
                if !armed.iter().any(|w| core::ptr::eq(*w, self)) {
                    armed.push(self);
                }
            });
        }
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
