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

/// Frames of the capture machinery itself, left out.
const EXCLUDED_SYMBOLS: &[&str] = &[
    "TVMFFIBacktrace",
    "TVMFFIErrorSetRaisedFromCStr",
    "tvm_ffi::core::backtrace",
    "tvm_ffi::capi::",
    "backtrace::",
    "__libc_",
    "ffi_call_",
];

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

/// Captures the current stack. A given `file`/`func` becomes the first line
/// (the caller's own location). Unless `cross_boundary`, the walk stops at
/// the first FFI boundary frame.
pub fn capture(location: Option<(&str, u32, &str)>, cross_boundary: bool) -> String {
    let mut out = String::new();
    let mut count = 0usize;
    let limit = *LIMIT;
    if let Some((file, line, func)) = location {
        push_line(&mut out, file, line, func);
        count += 1;
    }
    let mut stop = false;
    backtrace::trace(|frame| {
        backtrace::resolve_frame(frame, |symbol| {
            if stop || count >= limit {
                stop = true;
                return;
            }
            let name = symbol.name().map(|n| n.to_string());
            let name = name.as_deref().unwrap_or("<unknown>");
            if !cross_boundary && BOUNDARY_SYMBOLS.iter().any(|b| name.starts_with(b)) {
                stop = true;
                return;
            }
            if EXCLUDED_SYMBOLS
                .iter()
                .any(|e| name.starts_with(e) || name.contains(e))
            {
                return;
            }
            let file = symbol.filename().map(|f| f.display().to_string());
            if file.is_none() && name == "<unknown>" {
                return;
            }
            let file = file.as_deref().unwrap_or("<unknown>");
            push_line(&mut out, file, symbol.lineno().unwrap_or(0), name);
            count += 1;
        });
        !stop
    });
    out
}
