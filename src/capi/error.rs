//! `TVMFFIError*` and `TVMFFIBacktrace`.

use super::args::{arg_bytes, arg_cstr, arg_out, ffi_call, ffi_call_or};
use crate::abi::*;
use crate::platform::backtrace;
use crate::runtime::model::error::{new_error, set_raised, take_raised};
use crate::runtime::{Error, ObjectRef};
use core::cell::RefCell;
use core::ffi::{c_char, c_int};
use core::ptr::NonNull;

/// Raises an error made of a kind and message, with a backtrace as
/// `TVM_FFI_ERROR_BACKTRACE` asks (see `platform::backtrace`): named frames by
/// default, files and lines with `1`, none with `0`.
fn raise_text(kind: &[u8], message: &[u8]) {
    let bt = match *backtrace::ON_RAISE {
        backtrace::OnRaise::Named => backtrace::capture_on_raise(),
        backtrace::OnRaise::Full => backtrace::capture(None, false),
        backtrace::OnRaise::Off => String::new(),
    };
    set_raised(new_error(kind, message, bt.as_bytes(), None, None));
}

/// Raises `error` in this thread's slot, replacing (and releasing) what was
/// there. Ownership: borrowed; the slot takes its own reference.
/// A NULL `error` raises a ValueError saying so.
///
/// # Safety
/// `error` is NULL or a live Error object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIErrorSetRaised(error: TVMFFIObjectHandle) {
    ffi_call_or((), || match NonNull::new(error.cast::<TVMFFIObject>()) {
        // SAFETY: live per the contract; we take a new reference.
        Some(obj) => set_raised(unsafe { ObjectRef::from_borrowed(obj) }),
        None => set_raised(Error::value("TVMFFIErrorSetRaised: `error` is NULL").into_object()),
    })
}

/// Raises a new error of `kind` with `message`. NULL strings count as empty.
///
/// # Safety
/// `kind` and `message` are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char) {
    // SAFETY: per the contract.
    let kind = unsafe { arg_cstr(kind, "kind") }.unwrap_or_default();
    // SAFETY: per the contract.
    let message = unsafe { arg_cstr(message, "message") }.unwrap_or_default();
    ffi_call_or((), || raise_text(kind, message));
}

/// Raises a new error of `kind` whose message is the concatenation of the
/// non-NULL `message_parts`.
///
/// # Safety
/// `kind` is NULL or NUL-terminated; `message_parts` is NULL or holds
/// `num_parts` pointers, each NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIErrorSetRaisedFromCStrParts(
    kind: *const c_char,
    message_parts: *const *const c_char,
    num_parts: i32,
) {
    // SAFETY: per the contract.
    let kind = unsafe { arg_cstr(kind, "kind") }.unwrap_or_default();
    let mut message = Vec::new();
    if !message_parts.is_null() {
        for i in 0..num_parts.max(0) as usize {
            // SAFETY: `message_parts` holds `num_parts` entries.
            let part = unsafe { *message_parts.add(i) };
            // SAFETY: each part is NULL (skipped) or NUL-terminated.
            if let Ok(bytes) = unsafe { arg_cstr(part, "part") } {
                message.extend_from_slice(bytes);
            }
        }
    }
    ffi_call_or((), || raise_text(kind, &message));
}

/// Moves this thread's raised error into `*result` (NULL if none, as in
/// the reference) and empties the slot. Ownership: the caller owns the
/// returned reference.
///
/// A call that answered -1 has raised an error by the time its caller can
/// fetch it: where a C callee answers a failure without raising, this
/// library raises a `RuntimeError` as the call returns
/// (`runtime::model::boundary::failed_call`), not here.
///
/// # Safety
/// `result` is NULL (nothing happens) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIErrorMoveFromRaised(result: *mut TVMFFIObjectHandle) {
    if result.is_null() {
        return;
    }
    let err: TVMFFIObjectHandle = ffi_call_or(None, take_raised)
        .map_or(core::ptr::null_mut(), |e| e.into_raw().as_ptr().cast());
    // SAFETY: checked non-null; writable per the contract.
    unsafe { result.write(err) };
}

/// Creates a new Error object (not raised). Ownership: `*out` receives a new
/// reference. Errors: ValueError for NULL arguments.
///
/// # Safety
/// The byte arrays are NULL or valid; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIErrorCreate(
    kind: *const TVMFFIByteArray,
    message: *const TVMFFIByteArray,
    backtrace: *const TVMFFIByteArray,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    // SAFETY: forwarded contract; NULL cause and context.
    unsafe {
        TVMFFIErrorCreateWithCauseAndExtraContext(
            kind,
            message,
            backtrace,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            out,
        )
    }
}

/// Creates a new Error object with an optional cause (an Error) and extra
/// context (any object); both are borrowed and kept alive by the new error.
/// Ownership: `*out` receives a new reference.
/// Errors: ValueError for NULL arguments; TypeError if `cause_chain` is not
/// an Error.
///
/// # Safety
/// The byte arrays are NULL or valid; the handles are NULL or live objects;
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIErrorCreateWithCauseAndExtraContext(
    kind: *const TVMFFIByteArray,
    message: *const TVMFFIByteArray,
    backtrace: *const TVMFFIByteArray,
    cause_chain: TVMFFIObjectHandle,
    extra_context: TVMFFIObjectHandle,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (kind, message, backtrace, out) = unsafe {
            (
                arg_bytes(kind, "kind")?,
                arg_bytes(message, "message")?,
                arg_bytes(backtrace, "backtrace")?,
                arg_out(out, "out")?,
            )
        };
        let borrow = |h: TVMFFIObjectHandle| {
            // SAFETY: live objects per the contract; we take new references.
            NonNull::new(h.cast()).map(|p| unsafe { ObjectRef::from_borrowed(p) })
        };
        let cause = borrow(cause_chain);
        if let Some(c) = &cause
            && c.type_index() != kTVMFFIError
        {
            return Err(Error::type_error(format!(
                "`cause_chain` must be an ffi.Error, got type index {}",
                c.type_index()
            )));
        }
        *out = new_error(kind, message, backtrace, cause, borrow(extra_context))
            .into_raw()
            .as_ptr()
            .cast();
        Ok(())
    })
}

thread_local! {
    /// The last backtrace of this thread and the byte array describing it.
    static LAST_BACKTRACE: RefCell<(String, TVMFFIByteArray)> =
        const { RefCell::new((String::new(), TVMFFIByteArray { data: core::ptr::null(), size: 0 })) };
}

/// Captures the current stack as `  File "<file>", line <n>, in <func>` lines,
/// newest first. A given `filename`/`func` becomes the first line. Unless
/// `cross_ffi_boundary`, the walk stops at the FFI boundary
/// (`TVMFFIFunctionCall`, Python frames). `TVM_TRACEBACK_LIMIT` caps the
/// number of lines. Ownership: the result is thread-local, valid until the
/// next call on this thread.
///
/// # Safety
/// `filename` and `func` are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIBacktrace(
    filename: *const c_char,
    lineno: c_int,
    func: *const c_char,
    cross_ffi_boundary: c_int,
) -> *const TVMFFIByteArray {
    // SAFETY: per the contract.
    let file = unsafe { arg_cstr(filename, "filename") }.ok();
    // SAFETY: per the contract.
    let func = unsafe { arg_cstr(func, "func") }.ok();
    let text = ffi_call_or(String::new(), || {
        let location = match (file, func) {
            (Some(file), Some(func)) => Some((
                String::from_utf8_lossy(file).into_owned(),
                lineno.max(0) as u32,
                String::from_utf8_lossy(func).into_owned(),
            )),
            _ => None,
        };
        let location = location
            .as_ref()
            .map(|(f, l, n)| (f.as_str(), *l, n.as_str()));
        backtrace::capture(location, cross_ffi_boundary != 0)
    });
    LAST_BACKTRACE
        .try_with(|slot| {
            let mut slot = slot.borrow_mut();
            slot.0 = text;
            slot.1 = TVMFFIByteArray {
                data: slot.0.as_ptr().cast(),
                size: slot.0.len(),
            };
            &raw const slot.1
        })
        .unwrap_or(core::ptr::null())
}
