//! What `#[export]` and typed closures run on each call: argument
//! conversion with the reference's error messages, panics caught and
//! raised as errors, results handed back through the C ABI.

use crate::any::{Any, AnyView};
use crate::convert::{FromAny, IntoAny, TypeSchema};
use crate::error::{Error, Result};
use crate::sys::RawAny;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// A typed function's name and types, for its metadata and its errors.
pub struct Signature {
    name: &'static str,
    params: fn() -> Vec<TypeSchema>,
    ret: fn() -> TypeSchema,
    text: OnceLock<String>,
}

impl Signature {
    /// The signature of `name(params) -> ret`.
    pub const fn new(
        name: &'static str,
        params: fn() -> Vec<TypeSchema>,
        ret: fn() -> TypeSchema,
    ) -> Signature {
        Signature {
            name,
            params,
            ret,
            text: OnceLock::new(),
        }
    }
    /// `name(0: int, 1: str) -> int`, as argument errors quote it.
    fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let params: Vec<String> = (self.params)()
                .iter()
                .enumerate()
                .map(|(i, p)| format!("{i}: {}", p.text()))
                .collect();
            format!(
                "{}({}) -> {}",
                self.name,
                params.join(", "),
                (self.ret)().text()
            )
        })
    }
    /// `{"type_schema":"..."}`, as the reference's exports describe a
    /// function (`__tvm_ffi__metadata_<name>`).
    fn metadata(&self) -> String {
        let params: Vec<String> = (self.params)().iter().map(TypeSchema::json).collect();
        let schema = format!(
            "{{\"type\":\"ffi.Function\",\"named_args\":{{\"return\":[{}],\"params\":[{}]}}}}",
            (self.ret)().json(),
            params.join(",")
        );
        format!(
            "{{\"type_schema\":\"{}\"}}",
            schema.replace('\\', "\\\\").replace('"', "\\\"")
        )
    }
}

/// The arguments of one call, converted on demand.
pub struct Args<'a> {
    sig: &'a Signature,
    values: &'a [RawAny],
}

impl<'a> Args<'a> {
    /// Fails with the reference's `TypeError` unless there are `n`.
    #[inline]
    pub fn expect_len(&self, n: usize) -> Result<()> {
        if self.values.len() == n {
            Ok(())
        } else {
            Err(self.count_mismatch(n))
        }
    }
    #[cold]
    #[inline(never)]
    fn count_mismatch(&self, n: usize) -> Error {
        Error::type_error(format!(
            "Mismatched number of arguments when calling: `{}`. Expected {n} but got {} arguments",
            self.sig.text(),
            self.values.len()
        ))
    }
    /// Argument `i` as `T`, or the reference's `TypeError` naming the
    /// function, the argument and both types.
    #[inline]
    pub fn get<T: FromAny<'a>>(&self, i: usize) -> Result<T> {
        let view = AnyView::new(&self.values[i]);
        match T::from_view(view) {
            Some(v) => Ok(v),
            // Function pointers keep the message's making out of the
            // caller's inlined success path.
            None => Err(self.type_mismatch(i, view, T::schema, T::describe)),
        }
    }
    #[cold]
    #[inline(never)]
    fn type_mismatch(
        &self,
        i: usize,
        view: AnyView<'_>,
        expected: fn() -> TypeSchema,
        describe: fn(AnyView<'_>) -> String,
    ) -> Error {
        Error::type_error(format!(
            "Mismatched type on argument #{i} when calling: `{}`. Expected `{}` but got `{}`",
            self.sig.text(),
            expected().text(),
            describe(view)
        ))
    }
}

/// Runs one call of a packed function: `body` converts the arguments and
/// calls; its error or panic is raised and -1 returned.
///
/// # Safety
/// `args` holds `num_args` valid values for the call and `result` is
/// writable (the `TVMFFISafeCallType` contract).
#[inline]
pub unsafe fn call_packed(
    sig: &Signature,
    args: *const RawAny,
    num_args: i32,
    result: *mut RawAny,
    body: impl FnOnce(&Args<'_>) -> Result<Any>,
) -> i32 {
    let values: &[RawAny] = match usize::try_from(num_args) {
        Ok(0) | Err(_) => &[],
        // SAFETY: the caller's promise.
        Ok(n) => unsafe { core::slice::from_raw_parts(args, n) },
    };
    let args = Args { sig, values };
    guard(sig.name, || {
        crate::runtime::check_single_runtime()?;
        let value = body(&args)?;
        // SAFETY: the caller's promise; the value's reference moves out.
        unsafe { *result = value.into_raw() };
        Ok(())
    })
}

/// Runs `body` for a C caller: 0 on success, else the error (or the panic,
/// as a `RuntimeError` naming `what`) raised and -1.
#[inline]
pub fn guard(what: &str, body: impl FnOnce() -> Result<()>) -> i32 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => e.raise(),
        Err(payload) => raise_panic(what, payload),
    }
}

/// Raises a caught panic as a `RuntimeError`.
#[cold]
#[inline(never)]
fn raise_panic(what: &str, payload: Box<dyn std::any::Any + Send>) -> i32 {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned());
    Error::runtime_error(format!("panic in `{what}`: {text}")).raise()
}

/// Writes a string result (the `__tvm_ffi__doc_<name>` getter).
///
/// # Safety
/// `result` is writable.
pub unsafe fn return_text(result: *mut RawAny, text: &str) -> i32 {
    guard("doc", || {
        let value = text.into_any()?;
        // SAFETY: the caller's promise.
        unsafe { *result = value.into_raw() };
        Ok(())
    })
}

/// Writes a function's metadata (the `__tvm_ffi__metadata_<name>` getter).
///
/// # Safety
/// `result` is writable.
pub unsafe fn return_metadata(result: *mut RawAny, sig: &Signature) -> i32 {
    // SAFETY: the caller's promise.
    unsafe { return_text(result, &sig.metadata()) }
}
