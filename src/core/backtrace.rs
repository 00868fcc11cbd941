//! Backtraces in the format frontends parse:
//! `  File "<file>", line <n>, in <func>` lines, newest frame first.
//!
//! Capturing walks and symbolises the stack, so it only happens when asked:
//! through `TVMFFIBacktrace`, or for errors raised from C strings when the
//! environment variable `TVM_FFI_ERROR_BACKTRACE=1` is set.

use std::fmt::Write;
use std::sync::LazyLock;

/// Frames whose symbol starts with one of these are the FFI boundary: the
/// walk stops there unless asked to cross it.
const BOUNDARY_SYMBOLS: &[&str] = &[
    "TVMFFIFunctionCall",
    "slot_tp_call",
    "object_is_not_callable",
    "_Py",
    "PyObject",
];

/// Frames left out by symbol prefix: the C++ function machinery and the
/// capture entry points (the reference's list).
const EXCLUDED_SYMBOLS: &[&str] = &[
    "tvm::ffi::Function",
    "tvm::ffi::detail::",
    "TVMFFIBacktrace",
    "TVMFFIErrorSetRaisedFromCStr",
    "__libc_",
    "ffi_call_",
];

/// Frames left out by file: the official C++ headers' plumbing and the C++
/// standard library.
const EXCLUDED_FILES: &[&str] = &[
    "include/tvm/ffi/error.h",
    "include/tvm/ffi/function_detail.h",
    "include/tvm/ffi/function.h",
    "include/tvm/ffi/any.h",
    "include/c++/",
];

/// `Dl_info` of `dladdr`.
#[repr(C)]
struct DlInfo {
    fname: *const core::ffi::c_char,
    fbase: *mut core::ffi::c_void,
    sname: *const core::ffi::c_char,
    saddr: *mut core::ffi::c_void,
}

unsafe extern "C" {
    fn dladdr(addr: *const core::ffi::c_void, info: *mut DlInfo) -> core::ffi::c_int;
    fn dlsym(
        handle: *mut core::ffi::c_void,
        name: *const core::ffi::c_char,
    ) -> *mut core::ffi::c_void;
    fn free(ptr: *mut core::ffi::c_void);
}

/// The load address of the object containing `addr`, if any.
fn object_base(addr: *const core::ffi::c_void) -> Option<usize> {
    let mut info = DlInfo {
        fname: core::ptr::null(),
        fbase: core::ptr::null_mut(),
        sname: core::ptr::null(),
        saddr: core::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and fills `info`.
    let found = unsafe { dladdr(addr, &mut info) } != 0;
    (found && !info.fbase.is_null()).then_some(info.fbase as usize)
}

/// The base of this library: its own frames (the capture, the Rust
/// runtime linked into it) never appear in backtraces.
static OWN_BASE: LazyLock<Option<usize>> =
    LazyLock::new(|| object_base(capture as *const core::ffi::c_void));

type CxaDemangle = unsafe extern "C" fn(
    *const core::ffi::c_char,
    *mut core::ffi::c_char,
    *mut usize,
    *mut core::ffi::c_int,
) -> *mut core::ffi::c_char;

/// libstdc++'s `__cxa_demangle` when the process has it (every C++ host):
/// C++ frames then read exactly as the reference prints them.
static CXA_DEMANGLE: LazyLock<Option<CxaDemangle>> = LazyLock::new(|| {
    // SAFETY: RTLD_DEFAULT (NULL) lookup of a NUL-terminated name.
    let f = unsafe { dlsym(core::ptr::null_mut(), c"__cxa_demangle".as_ptr()) };
    // SAFETY: `__cxa_demangle` has this signature (Itanium C++ ABI).
    (!f.is_null())
        .then(|| unsafe { core::mem::transmute::<*mut core::ffi::c_void, CxaDemangle>(f) })
});

/// The readable name of a symbol: C++ names through `__cxa_demangle`,
/// others as the `backtrace` crate demangles them.
fn symbol_name(symbol: &backtrace::Symbol) -> Option<String> {
    let name = symbol.name()?;
    let raw = name.as_bytes();
    if raw.starts_with(b"_Z") {
        if let (Some(demangle), Ok(c)) = (*CXA_DEMANGLE, std::ffi::CString::new(raw)) {
            let mut status = 0;
            // SAFETY: a NUL-terminated input; NULL buffer asks for a malloc'd result.
            let out = unsafe {
                demangle(
                    c.as_ptr(),
                    core::ptr::null_mut(),
                    core::ptr::null_mut(),
                    &mut status,
                )
            };
            if !out.is_null() {
                // SAFETY: a NUL-terminated string malloc'd by __cxa_demangle.
                let text = unsafe { std::ffi::CStr::from_ptr(out) }
                    .to_string_lossy()
                    .into_owned();
                // SAFETY: we own the buffer.
                unsafe { free(out.cast()) };
                if status == 0 {
                    return Some(text);
                }
            }
        }
    }
    Some(name.to_string())
}

/// The most frames written (`TVM_TRACEBACK_LIMIT`, default 512).
static LIMIT: LazyLock<usize> = LazyLock::new(|| {
    std::env::var("TVM_TRACEBACK_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
});

/// Whether errors raised from C strings record a backtrace.
pub static ON_RAISE: LazyLock<bool> =
    LazyLock::new(|| std::env::var("TVM_FFI_ERROR_BACKTRACE").is_ok_and(|v| v == "1"));

fn push_line(out: &mut String, file: &str, line: u32, func: &str) {
    let _ = writeln!(out, "  File \"{file}\", line {line}, in {func}");
}

/// Captures the current stack, newest frame first. A given `file`/`func`
/// becomes the first line (the caller's own location) and stands for the
/// caller's frame, which the walk then skips. Unless `cross_boundary`, the
/// walk stops at the first FFI boundary frame. Frames of this library are
/// never shown.
pub fn capture(location: Option<(&str, u32, &str)>, cross_boundary: bool) -> String {
    let mut out = String::new();
    let mut count = 0usize;
    let limit = *LIMIT;
    let mut skip_caller = location.is_some();
    if let Some((file, line, func)) = location {
        if !excluded(Some(file), func) {
            push_line(&mut out, file, line, func);
            count += 1;
        }
    }
    let own = *OWN_BASE;
    let mut stop = false;
    backtrace::trace(|frame| {
        if own.is_some() && object_base(frame.ip()) == own {
            return true;
        }
        backtrace::resolve_frame(frame, |symbol| {
            if stop || count >= limit {
                stop = true;
                return;
            }
            let name = symbol_name(symbol).unwrap_or_else(|| "<unknown>".into());
            if !cross_boundary && BOUNDARY_SYMBOLS.iter().any(|b| name.starts_with(b)) {
                stop = true;
                return;
            }
            if skip_caller {
                skip_caller = false;
                return;
            }
            let file = symbol.filename().map(|f| f.display().to_string());
            if excluded(file.as_deref(), &name) {
                return;
            }
            if file.is_none() && (name == "<unknown>" || name.starts_with("0x0")) {
                return;
            }
            let file = file.as_deref().unwrap_or("<unknown>");
            push_line(&mut out, file, symbol.lineno().unwrap_or(0), &name);
            count += 1;
        });
        !stop
    });
    out
}

/// Whether a frame is left out (see [`EXCLUDED_SYMBOLS`], [`EXCLUDED_FILES`]).
fn excluded(file: Option<&str>, name: &str) -> bool {
    EXCLUDED_SYMBOLS.iter().any(|e| name.starts_with(e))
        || file.is_some_and(|f| EXCLUDED_FILES.iter().any(|e| f.contains(e)))
}
