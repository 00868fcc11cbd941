//! [`Error`]: a TVM-FFI error (kind, message, backtrace, cause), and the
//! bridge between Rust's `Result` and the C ABI's raised errors.

use crate::handle::Obj;
use crate::sys::{self, ByteArray, Handle};
use std::ffi::CString;

/// The result of every fallible call in this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// An error as every TVM-FFI language sees it: Python raises it as the
/// exception its kind names (`ValueError`, `TypeError`, ...).
#[derive(Clone)]
pub struct Error(Box<Parts>);

/// What an error holds, boxed: a `Result` with an `Error` stays two words,
/// which keeps every call's success path cheap.
#[derive(Clone)]
struct Parts {
    kind: String,
    message: String,
    backtrace: String,
    cause: Option<Error>,
}

impl Error {
    /// An error of `kind` (`ValueError`, `TypeError`, `RuntimeError`, ...).
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Error {
        Error(Box::new(Parts {
            kind: kind.into(),
            message: message.into(),
            backtrace: String::new(),
            cause: None,
        }))
    }
    /// A `ValueError`.
    pub fn value_error(message: impl Into<String>) -> Error {
        Error::new("ValueError", message)
    }
    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> Error {
        Error::new("TypeError", message)
    }
    /// A `RuntimeError`.
    pub fn runtime_error(message: impl Into<String>) -> Error {
        Error::new("RuntimeError", message)
    }
    /// The kind.
    pub fn kind(&self) -> &str {
        &self.0.kind
    }
    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// The backtrace, innermost frame last (`File "...", line N, in f`).
    pub fn backtrace(&self) -> &str {
        &self.0.backtrace
    }
    /// The error this one was raised from.
    pub fn cause(&self) -> Option<&Error> {
        self.0.cause.as_ref()
    }
    /// The same error, raised from `cause`.
    pub fn with_cause(mut self, cause: Error) -> Error {
        self.0.cause = Some(cause);
        self
    }
    /// Records the Rust source location as the backtrace's innermost
    /// frame, with the frames of the calling Rust code the runtime sees
    /// above it (up to the FFI boundary); [`bail!`](crate::bail) and
    /// [`ensure!`](crate::ensure) call it with the enclosing function's
    /// path. This crate's own frames (the exported function's wrapper, the
    /// panic guard) and the standard library's are left out, and Rust's
    /// symbol hashes are dropped: a Python traceback names the user's
    /// functions only.
    #[inline(always)] // so that the frame the runtime skips is the caller's
    pub fn at(mut self, file: &str, line: u32, function: &str) -> Error {
        let (Ok(file), Ok(function)) = (CString::new(file), CString::new(function)) else {
            return self;
        };
        let line = i32::try_from(line).unwrap_or(i32::MAX);
        // SAFETY: NUL-terminated strings; the result is NULL or a byte array
        // valid until the next call on this thread, copied at once.
        let text =
            unsafe { sys::TVMFFIBacktrace(file.as_ptr(), line, function.as_ptr(), 0).as_ref() };
        // SAFETY: the runtime's byte array is readable for its size.
        if let Some(bytes) = text.map(|t| unsafe { t.bytes() }) {
            self.0.backtrace = user_frames(&String::from_utf8_lossy(bytes));
        }
        self
    }

    /// Takes the error the last failed C call raised on this thread.
    pub(crate) fn take_raised() -> Error {
        let mut handle: Handle = core::ptr::null_mut();
        // SAFETY: `handle` is writable; we receive one reference or NULL.
        unsafe { sys::TVMFFIErrorMoveFromRaised(&mut handle) };
        if handle.is_null() {
            return Error::runtime_error("a TVM-FFI call failed without raising an error");
        }
        // SAFETY: an owned reference to an error object.
        let obj = unsafe { Obj::from_owned(handle) };
        Error::from_object(&obj)
    }
    /// Reads an error object (its cause chain too, up to a bound).
    pub(crate) fn from_object(obj: &Obj) -> Error {
        let mut chain = Vec::new();
        let mut next = Some(obj.handle());
        while let Some(h) = next.filter(|h| !h.is_null() && chain.len() < 64) {
            // SAFETY: an error object's cell follows its header; its byte
            // arrays are valid while the object lives (it does: `obj`
            // holds the head, and each holds its cause).
            let cell = unsafe {
                &*h.cast::<u8>()
                    .add(size_of::<sys::ObjectHeader>())
                    .cast::<sys::ErrorCell>()
            };
            // SAFETY: as above.
            let text = |b: &ByteArray| String::from_utf8_lossy(unsafe { b.bytes() }).into_owned();
            chain.push(Error::new(text(&cell.kind), text(&cell.message)));
            chain.last_mut().expect("just pushed").0.backtrace = text(&cell.backtrace);
            next = Some(cell.cause_chain);
        }
        let mut err = chain
            .pop()
            .unwrap_or_else(|| Error::runtime_error("invalid error object"));
        while let Some(outer) = chain.pop() {
            err = outer.with_cause(err);
        }
        err
    }
    /// Makes the runtime's error object for this error.
    pub(crate) fn to_object(&self) -> Option<Obj> {
        let cause = self.0.cause.as_ref().and_then(|c| c.to_object());
        let cause_handle = cause.as_ref().map_or(core::ptr::null_mut(), Obj::handle);
        let mut out: Handle = core::ptr::null_mut();
        // SAFETY: the byte arrays borrow live strings; the cause is borrowed
        // (the runtime takes its own reference); `out` is writable.
        let rc = unsafe {
            sys::TVMFFIErrorCreateWithCauseAndExtraContext(
                &ByteArray::of(self.0.kind.as_bytes()),
                &ByteArray::of(self.0.message.as_bytes()),
                &ByteArray::of(self.0.backtrace.as_bytes()),
                cause_handle,
                core::ptr::null_mut(),
                &mut out,
            )
        };
        // SAFETY: a new error object with one reference for us.
        (rc == 0 && !out.is_null()).then(|| unsafe { Obj::from_owned(out) })
    }
    /// Raises it for the C caller (which sees the function return -1).
    pub(crate) fn raise(self) -> i32 {
        match self.to_object() {
            Some(obj) => {
                // SAFETY: a live error object; the slot takes its own
                // reference, ours is released when `obj` drops.
                unsafe { sys::TVMFFIErrorSetRaised(obj.handle()) };
            }
            None => {
                let msg = CString::new(self.0.message.replace('\0', " ")).unwrap_or_default();
                let kind = CString::new(self.0.kind.replace('\0', " ")).unwrap_or_default();
                // SAFETY: NUL-terminated strings.
                unsafe { sys::TVMFFIErrorSetRaisedFromCStr(kind.as_ptr(), msg.as_ptr()) };
            }
        }
        -1
    }
}

/// Turns a C call's status into a `Result`.
pub(crate) fn check(rc: i32) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::take_raised())
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.0.kind, self.0.message)
    }
}

impl core::fmt::Debug for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.0.kind, self.0.message)?;
        if let Some(c) = &self.0.cause {
            write!(f, "\ncaused by {c:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.cause.as_ref().map(|c| c as _)
    }
}

/// The frames of a backtrace (`  File "..", line N, in f` lines, the given
/// location first) that are the user's code: without this crate's, the
/// standard library's and the exported functions' generated wrappers,
/// without Rust's symbol hashes (`::h0123456789abcdef`), and without the
/// walk's own frame of the given location (the same line and function).
fn user_frames(text: &str) -> String {
    /// Where this crate's plumbing and the standard library's frames start
    /// (demangled, or as a C++ demangler leaves Rust's legacy names).
    const PLUMBING: &[&str] = &[
        "tvmffi::",
        "std::",
        "core::",
        "alloc::",
        "__rust",
        "__tvm_ffi_",
        "<tvmffi::",
        "<std::",
        "<core::",
        "<alloc::",
        "_$LT$tvmffi..",
        "_$LT$std..",
        "_$LT$core..",
        "_$LT$alloc..",
    ];
    let mut out = String::with_capacity(text.len());
    let mut given: Option<(&str, &str)> = None;
    for line in text.lines() {
        let (head, function) = line.rsplit_once(", in ").unwrap_or((line, ""));
        if PLUMBING.iter().any(|p| function.starts_with(p)) || function.contains("::_::__tvm_ffi_")
        {
            continue;
        }
        let function = match function
            .len()
            .checked_sub(19)
            .map(|at| function.split_at(at))
        {
            Some((name, hash))
                if hash.starts_with("::h") && hash[3..].bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                name
            }
            _ => function,
        };
        let at_line = head.rsplit_once(", line ").map_or("", |(_, n)| n);
        match given {
            None => given = Some((at_line, function)),
            Some((line, path)) if line == at_line && names_function(path, function) => continue,
            Some(_) => {}
        }
        out.push_str(head);
        if !function.is_empty() {
            out.push_str(", in ");
            out.push_str(function);
        }
        out.push('\n');
    }
    out
}

/// Whether `name`, as a backtrace names a frame, is the function at `path`
/// (`my_ext::scale`): the whole path with full debug information, its
/// last segment (`scale`) with line tables only.
fn names_function(path: &str, name: &str) -> bool {
    path.strip_suffix(name)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with("::"))
}

/// The path of the function this expands in (`my_ext::scale`), for
/// backtraces.
#[doc(hidden)]
#[macro_export]
macro_rules! __function_path {
    () => {{
        fn f() {}
        let name = ::core::any::type_name_of_val(&f);
        name.strip_suffix("::f").unwrap_or(name)
    }};
}

/// Returns early with an error of the given kind, recording this source
/// line (and the enclosing function) in its backtrace:
///
/// ```
/// # extern crate tvm_ffi_runtime;
/// use tvmffi::{Result, bail};
///
/// fn size(n: i64) -> Result<u64> {
///     if n <= 0 {
///         bail!(ValueError, "expected a positive size, got {}", n);
///     }
///     Ok(n as u64)
/// }
/// let err = size(-2).unwrap_err();
/// assert_eq!((err.kind(), err.message()), ("ValueError", "expected a positive size, got -2"));
/// ```
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($fmt:tt)+) => {
        return ::core::result::Result::Err(
            $crate::Error::new(stringify!($kind), format!($($fmt)+))
                .at(file!(), line!(), $crate::__function_path!())
                .into(),
        )
    };
}

/// Returns early with an error of the given kind unless `cond` holds:
///
/// ```
/// # extern crate tvm_ffi_runtime;
/// use tvmffi::{Result, ensure};
///
/// fn size(n: i64) -> Result<u64> {
///     ensure!(n > 0, ValueError, "expected a positive size, got {}", n);
///     Ok(n as u64)
/// }
/// assert_eq!(size(3).unwrap(), 3);
/// assert_eq!(size(0).unwrap_err().kind(), "ValueError");
/// ```
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $kind:ident, $($fmt:tt)+) => {
        if !($cond) {
            $crate::bail!($kind, $($fmt)+);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::user_frames;

    const GIVEN: &str = "  File \"src/lib.rs\", line 9, in my_ext::scale\n";

    #[test]
    fn the_walks_own_frame_of_the_given_location_is_dropped_at_any_debug_level() {
        let full = "  File \"/w/src/lib.rs\", line 9, in my_ext::scale::h0123456789abcdef\n";
        let line_tables = "  File \"/w/src/lib.rs\", line 9, in scale\n";
        for walked in [full, line_tables] {
            assert_eq!(user_frames(&format!("{GIVEN}{walked}")), GIVEN);
        }
    }

    #[test]
    fn other_frames_stay_without_hashes_and_plumbing_goes() {
        let text = format!(
            "{GIVEN}  File \"/w/src/lib.rs\", line 9, in rescale\n  File \"/w/src/lib.rs\", line 3, in scale\n  \
             File \"/r/function.rs\", line 1, in tvmffi::function::call_boxed::h0123456789abcdef\n  \
             File \"/w/src/main.rs\", line 5, in my_ext::main::h0123456789abcdef\n"
        );
        assert_eq!(
            user_frames(&text),
            format!(
                "{GIVEN}  File \"/w/src/lib.rs\", line 9, in rescale\n  File \"/w/src/lib.rs\", line 3, in scale\n  \
                 File \"/w/src/main.rs\", line 5, in my_ext::main\n"
            )
        );
    }
}
