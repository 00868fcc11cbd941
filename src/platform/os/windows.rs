//! Windows: paths are UTF-8 in the C ABI, files are held against change by
//! their share mode, thread exit work is a thread-local destructor.

unsafe extern "C" {
    fn malloc(size: usize) -> *mut core::ffi::c_void;
    pub fn free(ptr: *mut core::ffi::c_void);
}

/// What `malloc` aligns to on 64-bit Windows.
pub const MAX_C_ALIGNMENT: usize = 16;

/// The C runtime of Windows has no `aligned_alloc` (its aligned blocks need
/// `_aligned_free`); its `malloc` returns 16-byte aligned blocks on 64-bit
/// Windows, which is all `MAX_C_ALIGNMENT` allows.
///
/// # Safety
/// As `aligned_alloc`.
pub unsafe fn aligned_alloc(_alignment: usize, size: usize) -> *mut core::ffi::c_void {
    const { assert!(cfg!(target_pointer_width = "64")) };
    // SAFETY: any size may be asked of malloc.
    unsafe { malloc(size) }
}

pub const CUDA_DRIVER_NAMES: &[&str] = &["nvcuda.dll"];

pub const NVRTC_NAMES: &[&str] = &[
    "nvrtc64_130_0.dll",
    "nvrtc64_120_0.dll",
    "nvrtc64_112_0.dll",
];

use std::borrow::Cow;
use std::fs::{DirBuilder, File, FileType, OpenOptions};
use std::path::Path;

/// The bytes that separate a path's components.
pub(super) const SEPARATORS: &[u8] = b"/\\";

/// The path of these UTF-8 bytes (lossy: see the folder's doc).
pub(super) fn path_from_bytes(bytes: &[u8]) -> Cow<'_, Path> {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => Cow::Borrowed(Path::new(s)),
        Cow::Owned(s) => Cow::Owned(s.into()),
    }
}

/// The UTF-8 bytes of this path (lossy).
pub(super) fn path_bytes(path: &Path) -> Cow<'_, [u8]> {
    match path.to_string_lossy() {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

/// A new file needs nothing more (no mode bits).
pub(super) fn create_new(_options: &mut OpenOptions, _mode: u32) {}

/// A private directory inherits its parent's ACL.
pub(super) fn private_dir(_builder: &mut DirBuilder) {}

/// Opening a file to check it shares read access only.
pub(super) fn for_check(options: &mut OpenOptions) {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_SHARE_READ: u32 = 1;
    options.share_mode(FILE_SHARE_READ);
}

/// No special file types are named.
pub(super) fn special_file_name(_t: FileType) -> Option<&'static str> {
    None
}

/// A positioned read (the file's cursor moves).
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// `GlobalMemoryStatusEx`'s total.
pub(super) fn physical_memory() -> Option<u64> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // SAFETY: an all-zero MEMORYSTATUSEX is a valid value to fill in.
    let mut status: MEMORYSTATUSEX = unsafe { core::mem::zeroed() };
    status.dwLength = size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: a buffer of the right type with its length set.
    (unsafe { GlobalMemoryStatusEx(&mut status) } != 0).then_some(status.ullTotalPhys)
}

/// Nothing to keep: the work is a thread-local destructor's.
pub(super) struct ExitKey;

impl ExitKey {
    pub(super) const fn new() -> ExitKey {
        ExitKey
    }

    /// Has a thread-local destructor call `run` (once per thread).
    pub(super) fn arm(&self, run: fn()) {
        /// The armed work of this thread, run when it is dropped.
        struct Armed(core::cell::RefCell<Vec<fn()>>);
        impl Drop for Armed {
            fn drop(&mut self) {
                for work in self.0.take() {
                    work();
                }
            }
        }
        thread_local! {
            static ARMED: Armed = const { Armed(core::cell::RefCell::new(Vec::new())) };
        }
        let _ = ARMED.try_with(|armed| {
            let mut armed = armed.0.borrow_mut();
            if !armed.iter().any(|w| *w as usize == run as usize) {
                armed.push(run);
            }
        });
    }
}

// What the C++ layer, built in MSVC's ABI on Windows, imports, as the
// official DLL does: MSVC's exception runtime and UCRT's heap (which
// MSVC-compiled code allocates from and frees into). Declared for the
// linker's import entries only; no Rust code calls them. The table below
// names them, so every link of this crate (the DLL, its programs, a
// dependent's) carries the import entries, not only this crate's own.
#[link(name = "vcruntime140", kind = "raw-dylib")]
unsafe extern "C" {
    fn __CxxFrameHandler3();
    fn _CxxThrowException();
    fn __std_exception_copy();
    fn __std_exception_destroy();
    fn __std_terminate();
    fn _purecall();
}
#[link(name = "api-ms-win-crt-heap-l1-1-0", kind = "raw-dylib")]
unsafe extern "C" {
    fn _malloc_base();
    fn _free_base();
}
#[used]
static MSVC_RUNTIME_IMPORTS: [unsafe extern "C" fn(); 8] = [
    __CxxFrameHandler3,
    _CxxThrowException,
    __std_exception_copy,
    __std_exception_destroy,
    __std_terminate,
    _purecall,
    _malloc_base,
    _free_base,
];

/// A detached thread (see `os::spawn_detached`; Windows has no `fork`, so
/// the standard library's threads serve).
pub fn spawn_detached(name: &str, stack_size: usize, f: Box<dyn FnOnce() + Send>) -> bool {
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(stack_size)
        .spawn(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        })
        .is_ok()
}
