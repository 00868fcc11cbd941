//! Errors: the Rust [`Error`] type, Error objects laid out as
//! `{TVMFFIObject, TVMFFIErrorCell}`, and the per-thread raised-error slot.

use crate::abi::*;
use crate::platform::failure::{Failure, FailureKind};
use crate::runtime::model::object::{ObjBox, ObjectRef, new_object};
use core::cell::{Cell, UnsafeCell};
use core::ffi::c_int;
use core::ptr::NonNull;

/// Return code of the C API and of `safe_call`: success.
pub const OK: c_int = 0;
/// Return code: failure; the error is in the thread's raised slot.
pub const RAISED: c_int = -1;
/// Return code: failure; the frontend already holds the error
/// (`EnvErrorAlreadySet`).
pub const ENV_ERROR_ALREADY_SET: c_int = -2;

/// The result type of the core.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// The error kinds this library raises (the names frontends map to their
/// exception classes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A value was of the wrong kind.
    TypeError,
    /// A value was of the right kind but unacceptable.
    ValueError,
    /// An index was out of range.
    IndexError,
    /// A key was missing.
    KeyError,
    /// An attribute was missing.
    AttributeError,
    /// An operation failed at run time.
    RuntimeError,
    /// Memory could not be allocated.
    MemoryError,
    /// The operation exists in the reference but not (yet) here.
    NotImplementedError,
    /// A bug in this library (e.g. a caught panic).
    InternalError,
    /// Calls nested so deep that the thread's stack is nearly used up.
    RecursionError,
}

impl ErrorKind {
    /// The kind's name as stored in `TVMFFIErrorCell::kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::TypeError => "TypeError",
            ErrorKind::RecursionError => "RecursionError",
            ErrorKind::ValueError => "ValueError",
            ErrorKind::IndexError => "IndexError",
            ErrorKind::KeyError => "KeyError",
            ErrorKind::AttributeError => "AttributeError",
            ErrorKind::RuntimeError => "RuntimeError",
            ErrorKind::MemoryError => "MemoryError",
            ErrorKind::NotImplementedError => "NotImplementedError",
            ErrorKind::InternalError => "InternalError",
        }
    }
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error on its way to the C boundary, where it is raised into the
/// thread-local slot. One pointer wide, so `Result`s stay in registers.
#[derive(thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<ErrorRepr>);

impl core::fmt::Debug for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Error({self})")
    }
}

/// What an [`Error`] holds.
#[derive(Debug, thiserror::Error)]
pub enum ErrorRepr {
    /// A new error of a known kind.
    #[error("{kind}: {message}")]
    New {
        /// The kind.
        kind: ErrorKind,
        /// The message.
        message: String,
    },
    /// An existing Error object (e.g. raised by a callee), passed on as is.
    #[error("{}", describe_error_object(.0))]
    Object(ObjectRef),
    /// The frontend already has an error pending; the C return value is -2
    /// (`EnvErrorAlreadySet`).
    #[error("a frontend error is already pending")]
    EnvAlreadySet,
    /// A callee failed with this code and left its error raised; the code
    /// is returned as it is.
    #[error("a callee failed with code {0}")]
    Passthrough(i32),
}

impl From<Failure> for Error {
    fn from(f: Failure) -> Error {
        let kind = match f.kind {
            FailureKind::Value => ErrorKind::ValueError,
            FailureKind::Runtime => ErrorKind::RuntimeError,
            FailureKind::Internal => ErrorKind::InternalError,
        };
        Error::new(kind, f.message)
    }
}

impl Error {
    /// A new error of `kind`.
    #[cold]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(ErrorRepr::New {
            kind,
            message: message.into(),
        }))
    }
    /// An existing Error object.
    #[cold]
    pub fn object(obj: ObjectRef) -> Self {
        Error(Box::new(ErrorRepr::Object(obj)))
    }
    /// What the error holds.
    pub fn repr(&self) -> &ErrorRepr {
        &self.0
    }
    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::TypeError, message)
    }
    /// A `ValueError`.
    pub fn value(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ValueError, message)
    }
    /// A `RuntimeError`.
    pub fn runtime(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::RuntimeError, message)
    }
    /// An `IndexError`.
    pub fn index(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::IndexError, message)
    }

    /// The error raised by a callee that returned nonzero: whatever is in the
    /// slot, or [`Error::not_raised`] if the callee left it empty.
    #[cold]
    pub fn from_raised(code: i32) -> Self {
        if code == ENV_ERROR_ALREADY_SET {
            return Error(Box::new(ErrorRepr::EnvAlreadySet));
        }
        take_raised().map_or_else(|| Error::not_raised(code), Error::object)
    }

    /// The `RuntimeError` standing for a callee that answered `code` (a
    /// failure) and raised nothing: a callback whose own error reporting
    /// failed does this (Python at its recursion limit), and every caller
    /// that fetches the error it was told of would otherwise find none.
    #[cold]
    pub fn not_raised(code: i32) -> Self {
        Error::runtime(format!(
            "a call answered {code} (failed) but raised no error (a callback whose own \
             error reporting failed does this, such as Python at its recursion limit)"
        ))
    }

    /// The same kind with a new message made from the old one; the original
    /// error becomes the cause (as C++ rethrows with context).
    pub fn rewrap(self, message: impl FnOnce(&str) -> String) -> Error {
        let cause = self.into_object();
        let (kind, old, backtrace) = match error_cell(&cause) {
            // SAFETY: the cell's arrays describe the error's own storage.
            Some(cell) => unsafe {
                (
                    crate::runtime::model::bytes::byte_slice(cell.kind).to_vec(),
                    String::from_utf8_lossy(crate::runtime::model::bytes::byte_slice(cell.message))
                        .into_owned(),
                    crate::runtime::model::bytes::byte_slice(cell.backtrace).to_vec(),
                )
            },
            None => (b"InternalError".to_vec(), String::new(), Vec::new()),
        };
        let text = message(&old);
        Error::object(new_error(
            &kind,
            text.as_bytes(),
            &backtrace,
            Some(cause),
            None,
        ))
    }

    /// A callee's nonzero return code, passed on unchanged to our caller
    /// (the raised error stays in the slot).
    #[cold]
    pub fn passthrough(code: i32) -> Self {
        Error(Box::new(ErrorRepr::Passthrough(code)))
    }

    /// Converts the error into an Error object.
    pub fn into_object(self) -> ObjectRef {
        match *self.0 {
            ErrorRepr::New { kind, message } => new_error(
                kind.as_str().as_bytes(),
                message.as_bytes(),
                b"",
                None,
                None,
            ),
            ErrorRepr::Object(obj) => obj,
            ErrorRepr::EnvAlreadySet => new_error(
                b"EnvErrorAlreadySet",
                b"a frontend error is already pending",
                b"",
                None,
                None,
            ),
            ErrorRepr::Passthrough(code) => {
                take_raised().unwrap_or_else(|| Error::not_raised(code).into_object())
            }
        }
    }
}

/// `kind: message` of an Error object, for `Display`.
fn describe_error_object(obj: &ObjectRef) -> String {
    match error_cell(obj) {
        Some(cell) => {
            // SAFETY: the cell's arrays describe the error's own storage.
            let (kind, msg) = unsafe {
                (
                    crate::runtime::model::bytes::byte_slice(cell.kind),
                    crate::runtime::model::bytes::byte_slice(cell.message),
                )
            };
            format!(
                "{}: {}",
                String::from_utf8_lossy(kind),
                String::from_utf8_lossy(msg)
            )
        }
        None => format!("non-error object of type index {}", obj.type_index()),
    }
}

/// The cell of an Error object (ours or foreign), None for other objects.
pub fn error_cell(obj: &ObjectRef) -> Option<&TVMFFIErrorCell> {
    obj.cell()
}

/// Owned, NUL-terminated copy of a byte string (the NUL is not counted).
struct Text(Box<[u8]>);

impl Text {
    fn new(bytes: &[u8]) -> Self {
        let mut v = Vec::with_capacity(bytes.len() + 1);
        v.extend_from_slice(bytes);
        v.push(0);
        Text(v.into_boxed_slice())
    }
    fn as_byte_array(&self) -> TVMFFIByteArray {
        TVMFFIByteArray {
            data: self.0.as_ptr().cast(),
            size: self.0.len() - 1,
        }
    }
}

/// The payload of our Error objects: the C cell, then the storage it points to.
#[repr(C)]
struct ErrorPayload {
    cell: UnsafeCell<TVMFFIErrorCell>,
    kind: Text,
    message: Text,
    backtrace: UnsafeCell<Text>,
    cause: Option<ObjectRef>,
    extra: Option<ObjectRef>,
}

// SAFETY: all fields but the backtrace are immutable after creation; the
// backtrace is only changed through `update_backtrace`, which, as in the
// official runtime, the owner calls before sharing the error.
unsafe impl Sync for ErrorPayload {}
// SAFETY: the raw pointers in the cell point into the payload itself.
unsafe impl Send for ErrorPayload {}

/// Makes a new Error object. `cause` and `extra` are kept alive by it.
pub fn new_error(
    kind: &[u8],
    message: &[u8],
    backtrace: &[u8],
    cause: Option<ObjectRef>,
    extra: Option<ObjectRef>,
) -> ObjectRef {
    let kind = Text::new(kind);
    let message = Text::new(message);
    let backtrace = Text::new(backtrace);
    let cell = TVMFFIErrorCell {
        kind: kind.as_byte_array(),
        message: message.as_byte_array(),
        backtrace: backtrace.as_byte_array(),
        update_backtrace: Some(update_backtrace),
        cause_chain: cause
            .as_ref()
            .map_or(core::ptr::null_mut(), |c| c.as_ptr().cast()),
        extra_context: extra
            .as_ref()
            .map_or(core::ptr::null_mut(), |c| c.as_ptr().cast()),
    };
    // Boxed slices do not move when the payload moves into the object.
    new_object(
        kTVMFFIError,
        ErrorPayload {
            cell: UnsafeCell::new(cell),
            kind,
            message,
            backtrace: UnsafeCell::new(backtrace),
            cause,
            extra,
        },
    )
}

/// `TVMFFIErrorCell::update_backtrace` of our Error objects.
unsafe extern "C" fn update_backtrace(
    this: TVMFFIObjectHandle,
    backtrace: *const TVMFFIByteArray,
    update_mode: i32,
) {
    if this.is_null() || backtrace.is_null() {
        return;
    }
    crate::platform::panic::contain_panic(|| {
        // SAFETY: `this` is one of our Error objects (the function pointer is
        // only installed in them) and the caller holds a reference to it.
        let payload = unsafe { &*this.cast::<ObjBox<ErrorPayload>>() };
        let payload = payload.payload();
        // SAFETY: the caller passes a valid byte array.
        let extra = unsafe { crate::runtime::model::bytes::byte_slice(*backtrace) };
        // SAFETY: not shared yet (the contract of update_backtrace).
        let current = unsafe { &mut *payload.backtrace.get() };
        let new = if update_mode == kTVMFFIBacktraceUpdateModeAppend {
            let old = &current.0[..current.0.len() - 1];
            Text::new(&[old, extra].concat())
        } else {
            Text::new(extra)
        };
        *current = new;
        // SAFETY: as above, the cell is not being read concurrently.
        unsafe { (*payload.cell.get()).backtrace = current.as_byte_array() };
    });
}

thread_local! {
    /// This thread's raised error, an owned reference, or NULL. Without a
    /// destructor, so it stays usable while the thread exits: C++
    /// `thread_local` and `pthread_key` destructors may still raise and
    /// fetch. What it holds at exit is released by [`RELEASE_AT_EXIT`].
    static RAISED_SLOT: Cell<*mut TVMFFIObject> = const { Cell::new(core::ptr::null_mut()) };
}

/// Releases the error left in the slot when a thread exits; armed by every
/// [`set_raised`], so an error raised by a destructor at exit is released
/// too.
static RELEASE_AT_EXIT: crate::platform::os::AtThreadExit =
    crate::platform::os::AtThreadExit::new(|| drop(take_raised()));

/// Puts `err` in this thread's slot, releasing what was there.
pub fn set_raised(err: ObjectRef) {
    let old = RAISED_SLOT.replace(err.into_raw_ptr());
    RELEASE_AT_EXIT.arm();
    // SAFETY: the slot holds owned references only.
    drop(NonNull::new(old).map(|p| unsafe { ObjectRef::from_raw(p) }));
}

/// Takes the error out of this thread's slot.
pub fn take_raised() -> Option<ObjectRef> {
    let held = RAISED_SLOT.replace(core::ptr::null_mut());
    // SAFETY: the slot holds owned references only; this one moves out.
    NonNull::new(held).map(|p| unsafe { ObjectRef::from_raw(p) })
}

/// Whether this thread's slot holds an error.
pub fn has_raised() -> bool {
    !RAISED_SLOT.get().is_null()
}
