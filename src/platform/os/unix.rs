//! Unix: paths are bytes, files and directories carry mode bits, thread
//! exit work is a `pthread_key` destructor.

unsafe extern "C" {
    /// C11's, in every Unix C library.
    pub fn aligned_alloc(alignment: usize, size: usize) -> *mut core::ffi::c_void;
    pub fn free(ptr: *mut core::ffi::c_void);
}

/// The alignment the runtime asks of `aligned_alloc` at most (C11 allows
/// more; 16 is what the object allocator needs).
pub const MAX_C_ALIGNMENT: usize = 16;

pub const CUDA_DRIVER_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

pub const NVRTC_NAMES: &[&str] = &[
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
    "libnvrtc.so",
];

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs::{DirBuilder, File, FileType, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The bytes that separate a path's components.
pub(super) const SEPARATORS: &[u8] = b"/";

/// The path of these bytes, as they are.
pub(super) fn path_from_bytes(bytes: &[u8]) -> Cow<'_, Path> {
    Cow::Borrowed(Path::new(OsStr::from_bytes(bytes)))
}

/// The bytes of this path, as they are.
pub(super) fn path_bytes(path: &Path) -> Cow<'_, [u8]> {
    Cow::Borrowed(path.as_os_str().as_bytes())
}

/// A new file's mode, never through a link.
pub(super) fn create_new(options: &mut OpenOptions, mode: u32) {
    options.mode(mode).custom_flags(libc::O_NOFOLLOW);
}

/// A private directory's mode.
pub(super) fn private_dir(builder: &mut DirBuilder) {
    builder.mode(0o700);
}

/// Opening a file to check it never blocks (on a FIFO).
pub(super) fn for_check(options: &mut OpenOptions) {
    options.custom_flags(libc::O_NONBLOCK);
}

/// What the special file types are called.
pub(super) fn special_file_name(t: FileType) -> Option<&'static str> {
    if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// `pread`.
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Physical pages times the page size.
pub(super) fn physical_memory() -> Option<u64> {
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

/// The `pthread_key` whose destructor runs a thread's exit work, made on
/// first use (none where the system has no key left).
pub(super) struct ExitKey(std::sync::OnceLock<Option<libc::pthread_key_t>>);

impl ExitKey {
    pub(super) const fn new() -> ExitKey {
        ExitKey(std::sync::OnceLock::new())
    }

    /// Sets the key for this thread: its destructor calls `run`.
    pub(super) fn arm(&self, run: fn()) {
        /// The key's destructor: its value is the work to run.
        unsafe extern "C" fn on_exit(run: *mut core::ffi::c_void) {
            // SAFETY: the key's only values are `fn()` pointers (`arm`).
            let run = unsafe { core::mem::transmute::<*mut core::ffi::c_void, fn()>(run) };
            run();
        }
        let key = self.0.get_or_init(|| {
            let mut key = 0;
            // SAFETY: creates a key with a destructor of the right type.
            (unsafe { libc::pthread_key_create(&mut key, Some(on_exit)) } == 0).then_some(key)
        });
        if let Some(key) = *key {
            // SAFETY: a live key; the value is a function pointer, never freed.
            unsafe { libc::pthread_setspecific(key, run as *const core::ffi::c_void) };
        }
    }
}

/// A bare detached pthread (see `os::spawn_detached`).
pub fn spawn_detached(name: &str, stack_size: usize, f: Box<dyn FnOnce() + Send>) -> bool {
    extern "C" fn start(arg: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: `arg` is the box `spawn_detached` leaked for this thread,
        // taken back once, here.
        let f = unsafe { Box::from_raw(arg.cast::<Box<dyn FnOnce() + Send>>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        core::ptr::null_mut()
    }
    let arg = Box::into_raw(Box::new(f));
    // SAFETY: an attribute object initialised, set and destroyed here; the
    // thread takes `arg` (or it is taken back when the thread is refused);
    // a name of at most 15 bytes and its NUL.
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_attr_init(&mut attr) != 0 {
            drop(Box::from_raw(arg));
            return false;
        }
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        libc::pthread_attr_setstacksize(&mut attr, stack_size.max(libc::PTHREAD_STACK_MIN));
        let mut thread: libc::pthread_t = core::mem::zeroed();
        let rc = libc::pthread_create(&mut thread, &attr, start, arg.cast());
        libc::pthread_attr_destroy(&mut attr);
        if rc != 0 {
            drop(Box::from_raw(arg));
            return false;
        }
        set_thread_name(thread, name);
    }
    true
}

/// Names a thread as the system shows it (at most 15 bytes on Linux).
#[cfg(target_os = "linux")]
fn set_thread_name(thread: libc::pthread_t, name: &str) {
    let mut bytes: Vec<u8> = name.bytes().take(15).filter(|&b| b != 0).collect();
    bytes.push(0);
    // SAFETY: a live thread and a NUL-terminated name of at most 16 bytes.
    unsafe { libc::pthread_setname_np(thread, bytes.as_ptr().cast()) };
}

/// Elsewhere a thread names only itself: left unnamed.
#[cfg(not(target_os = "linux"))]
fn set_thread_name(_thread: libc::pthread_t, _name: &str) {}
