//! The packed-call protocol where Rust meets C: how a `Result` or a panic
//! becomes a return code and a raised error.
//!
//! A call returns [`OK`], or [`RAISED`] with the error in the thread's slot,
//! or [`ENV_ERROR_ALREADY_SET`] when the frontend (Python) already holds one.
//! Every exported entry point (`capi`'s `ffi_call`/`ffi_call_or`) and every
//! callback C calls into us (the `safe_call` trampolines of Rust closures,
//! field getters and setters, the C++ module vtable bridge) runs
//! its body through these functions, so no panic crosses into C. Callbacks
//! that return nothing and whose caller looks at no error (deleters, an
//! Error's `update_backtrace`) contain a panic with
//! [`contain_panic`](crate::platform::panic::contain_panic), in the
//! layer below, where those objects are made.
//!
//! It lives in `runtime`, not `capi`: `runtime` and `module` install those
//! callbacks in the objects they make, and the layering runs one way
//! (abi <- runtime <- module <- capi), so the protocol sits at the lowest layer
//! that speaks it; `capi` only adds its argument helpers on top.

use crate::abi::TVMFFIAny;
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{
    ENV_ERROR_ALREADY_SET, Error, ErrorKind, ErrorRepr, OK, RAISED, Result, has_raised, set_raised,
};
use core::ffi::c_int;

/// Runs `f`, turning an error or a panic into a raised error and a nonzero
/// code: the one place where the core's `Result` meets the C convention.
#[inline]
pub fn catch_to_code(f: impl FnOnce() -> Result<()>) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => OK,
        Ok(Err(err)) => match err.repr() {
            ErrorRepr::EnvAlreadySet => ENV_ERROR_ALREADY_SET,
            // The callee's error is already raised; its code goes back unchanged.
            ErrorRepr::Passthrough(code) => failed_call(*code),
            _ => {
                set_raised(err.into_object());
                RAISED
            }
        },
        Err(payload) => {
            raise_panic(payload);
            RAISED
        }
    }
}

/// Runs `f` for a C caller that gets a value, not a code (a void entry
/// point, a pointer, a deleter): a panic raises an `InternalError` (for a
/// caller that looks) and answers `fallback`.
#[inline]
pub fn catch_or<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => {
            raise_panic(payload);
            fallback
        }
    }
}

/// Runs `f` for a C caller that takes an `Expected` result in one value
/// (the structural visit and mutate hooks and vtables): the value on
/// success, the Error object (type index `kTVMFFIError`) on failure, and an
/// `InternalError` on a panic.
#[inline]
pub fn catch_to_expected(f: impl FnOnce() -> Result<Any>) -> TVMFFIAny {
    let err = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(value)) => return value.into_raw(),
        Ok(Err(err)) => err,
        Err(payload) => panic_error(payload),
    };
    // Building the error object allocates; a panic there answers None.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Any::from(err.into_object()).into_raw()
    }))
    .unwrap_or(TVMFFIAny::NONE)
}

/// An `InternalError` carrying a caught panic's message.
#[cold]
fn panic_error(payload: Box<dyn core::any::Any + Send>) -> Error {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".into());
    Error::new(ErrorKind::InternalError, format!("panic: {text}"))
}

/// Raises a caught panic as an `InternalError` carrying its message.
#[cold]
fn raise_panic(payload: Box<dyn core::any::Any + Send>) {
    // Raising allocates; a second panic there is contained too.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set_raised(panic_error(payload).into_object());
    }));
}

/// Raises `err` and returns its C code; kept out of line so that hot entry
/// points stay a few instructions long.
#[cold]
#[inline(never)]
pub fn raise_code(err: Error) -> c_int {
    catch_to_code(|| Err(err))
}

/// What the caller of a C callee sees of the failure `code` it answered:
/// the code unchanged, with the callee's error left raised. A failure
/// other than [`ENV_ERROR_ALREADY_SET`] that raised nothing (the callee
/// broke the convention: Python at its recursion limit loses its own error
/// while reporting it) raises [`Error::not_raised`] first, so that the
/// caller's fetch finds an error: the official Python package and C++
/// headers wrap whatever the fetch hands back and crash on NULL. -2 passes
/// untouched: the frontend holds its error. Every place this library
/// receives a C callee's code calls it, off the success path (the naked
/// trampolines tail-call it with the code in `edi`).
#[cold]
#[inline(never)]
pub extern "C" fn failed_call(code: c_int) -> c_int {
    if code != ENV_ERROR_ALREADY_SET && !has_raised() {
        catch_or((), || set_raised(Error::not_raised(code).into_object()));
    }
    code
}
