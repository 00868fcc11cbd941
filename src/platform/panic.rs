//! Panics never unwind into C.

/// Runs `f` for a C caller that gets nothing back and looks at no error (a
/// deleter, a backtrace update, an `atexit` handler): a panic stops there,
/// never unwinding into C, and what `f` was releasing leaks. The one place
/// those callbacks meet panics; callers that take a return code go through
/// the runtime's boundary (`runtime::model::boundary`) instead.
pub fn contain_panic(f: impl FnOnce()) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
}
