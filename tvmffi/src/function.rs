//! [`Function`]: a TVM-FFI function, made from a typed Rust closure or
//! found by name, and called from Rust with typed or untyped arguments.

use crate::any::{Any, AnyView};
use crate::convert::{FromAny, IntoAny, IntoResult, TypeSchema};
use crate::error::{Error, Result, check};
use crate::export::{Args, Signature, guard};
use crate::handle::Obj;
use crate::sys::{self, ByteArray, Handle, RawAny};
use core::ffi::c_void;

/// A function any TVM-FFI language can call (`ffi.Function`).
#[derive(Clone)]
pub struct Function(Obj);

impl Function {
    /// The global function registered as `name`, or a `ValueError`.
    pub fn get_global(name: &str) -> Result<Function> {
        Function::find_global(name)?
            .ok_or_else(|| Error::value_error(format!("Cannot find global function `{name}`")))
    }
    /// The global function registered as `name`, if any.
    pub fn find_global(name: &str) -> Result<Option<Function>> {
        let mut out: Handle = core::ptr::null_mut();
        // SAFETY: a valid name; `out` is writable and receives a reference.
        check(unsafe { sys::TVMFFIFunctionGetGlobal(&ByteArray::of(name.as_bytes()), &mut out) })?;
        // SAFETY: an owned reference, or NULL.
        Ok((!out.is_null()).then(|| Function(unsafe { Obj::from_owned(out) })))
    }
    /// Registers this function as the global `name` (every language finds
    /// it by that name). Fails if the name is taken, unless `replace`.
    pub fn register_global(&self, name: &str, replace: bool) -> Result<()> {
        // SAFETY: valid name and live function; the registry takes its own
        // reference.
        check(unsafe {
            sys::TVMFFIFunctionSetGlobal(
                &ByteArray::of(name.as_bytes()),
                self.0.handle(),
                replace as i32,
            )
        })
    }
    /// A function from a typed closure. Parameters convert from the
    /// arguments ([`FromAny`], owned types), the result through
    /// [`IntoResult`]; a wrong argument count or type raises the
    /// reference's `TypeError`, a panic a `RuntimeError`.
    ///
    /// ```
    /// # extern crate tvm_ffi_runtime;
    /// # use tvmffi::{Function, Result};
    /// # fn main() -> Result<()> {
    /// let f = Function::from_typed("greet", |n: i64, who: String| -> Result<String> {
    ///     Ok(format!("{n} hello {who}"))
    /// })?;
    /// assert_eq!(f.call::<_, String>((1, "you"))?, "1 hello you");
    /// let err = f.call::<_, String>(("one", "you")).unwrap_err();
    /// assert_eq!(
    ///     err.message(),
    ///     "Mismatched type on argument #0 when calling: `greet(0: int, 1: str) -> str`. \
    ///      Expected `int` but got `ffi.SmallStr`"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_typed<Params, F: TypedClosure<Params>>(
        name: &'static str,
        f: F,
    ) -> Result<Function> {
        Function::from_packed(Signature::new(name, F::params, F::ret), move |args| {
            f.invoke(args)
        })
    }
    /// A function whose calls run `f` on the arguments, `sig` describing
    /// them (what [`function!`](crate::function) and
    /// [`Function::from_typed`] make).
    #[doc(hidden)]
    pub fn from_packed<F>(sig: Signature, f: F) -> Result<Function>
    where
        F: Fn(&Args<'_>) -> Result<Any> + Send + Sync + 'static,
    {
        let ctx = Box::into_raw(Box::new(Boxed { sig, f }));
        let mut out: Handle = core::ptr::null_mut();
        // SAFETY: `ctx` stays valid until the runtime calls `drop_boxed`;
        // `out` is writable.
        let rc = unsafe {
            sys::TVMFFIFunctionCreate(ctx.cast(), call_boxed::<F>, Some(drop_boxed::<F>), &mut out)
        };
        if rc != 0 {
            // SAFETY: creation failed, so the runtime did not take `ctx`.
            drop(unsafe { Box::from_raw(ctx) });
            return Err(Error::take_raised());
        }
        // SAFETY: a new function with one reference for us.
        Ok(Function(unsafe { Obj::from_owned(out) }))
    }
    /// Calls it with borrowed arguments.
    pub fn call_any(&self, args: &[AnyView<'_>]) -> Result<Any> {
        call_handle(self.0.handle(), args)
    }
    /// Calls it with typed arguments (a tuple) and converts the result:
    /// `let s: String = f.call((1, "x"))?;`.
    pub fn call<A: IntoArgs, R: for<'a> FromAny<'a>>(&self, args: A) -> Result<R> {
        let owned = args.into_args()?;
        let views: Vec<AnyView<'_>> = owned.iter().map(Any::view).collect();
        let result = self.call_any(&views)?;
        result.get::<R>().ok_or_else(|| {
            Error::type_error(format!(
                "the call returned `{}`, which does not convert to `{}`",
                result.type_key(),
                R::schema().text()
            ))
        })
    }
}

fn call_handle(f: Handle, args: &[AnyView<'_>]) -> Result<Any> {
    let raw: Vec<RawAny> = args.iter().map(|a| *a.raw()).collect();
    let n = i32::try_from(raw.len()).map_err(|_| Error::value_error("too many arguments"))?;
    let mut out = RawAny::NONE;
    // SAFETY: a live function; `raw` holds valid views for the call; `out`
    // is writable and receives an owned value.
    check(unsafe { sys::TVMFFIFunctionCall(f, raw.as_ptr(), n, &mut out) })?;
    // SAFETY: as above.
    Ok(unsafe { Any::from_raw(out) })
}

/// Calls the global function `name`.
pub(crate) fn call_global(name: &str, args: &[AnyView<'_>]) -> Result<Any> {
    Function::get_global(name)?.call_any(args)
}

crate::convert::object_conversions!(Function, "ffi.Function", sys::FUNCTION);

impl core::fmt::Debug for Function {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "<ffi.Function {:p}>", self.0.handle())
    }
}

/// Arguments of a typed call: a tuple of [`IntoAny`] values.
pub trait IntoArgs {
    /// Converts each.
    fn into_args(self) -> Result<Vec<Any>>;
}

/// A closure [`Function::from_typed`] accepts: `Fn(A0, A1, ..) -> R` with
/// owned [`FromAny`] parameters and an [`IntoResult`] result.
pub trait TypedClosure<Params>: Send + Sync + 'static {
    /// The parameters' schemas.
    fn params() -> Vec<TypeSchema>;
    /// The result's schema.
    fn ret() -> TypeSchema;
    /// Converts the arguments and calls.
    fn invoke(&self, args: &Args<'_>) -> Result<Any>;
}

macro_rules! arities {
    ($(($($a:ident $i:tt),*))*) => {$(
        impl<$($a: IntoAny),*> IntoArgs for ($($a,)*) {
            #[allow(unused_variables, clippy::unused_unit)]
            fn into_args(self) -> Result<Vec<Any>> {
                Ok(vec![$(self.$i.into_any()?),*])
            }
        }
        impl<Func, Ret, $($a),*> TypedClosure<($($a,)*)> for Func
        where
            Func: Fn($($a),*) -> Ret + Send + Sync + 'static,
            Ret: IntoResult,
            $($a: for<'x> FromAny<'x>,)*
        {
            fn params() -> Vec<TypeSchema> {
                vec![$(<$a as FromAny>::schema()),*]
            }
            fn ret() -> TypeSchema {
                Ret::schema()
            }
            #[allow(unused_variables)]
            fn invoke(&self, args: &Args<'_>) -> Result<Any> {
                args.expect_len(<[usize]>::len(&[$($i),*]))?;
                (self)($(args.get::<$a>($i)?),*).into_result()
            }
        }
    )*};
}
arities! {
    ()
    (A0 0)
    (A0 0, A1 1)
    (A0 0, A1 1, A2 2)
    (A0 0, A1 1, A2 2, A3 3)
    (A0 0, A1 1, A2 2, A3 3, A4 4)
    (A0 0, A1 1, A2 2, A3 3, A4 4, A5 5)
    (A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6)
    (A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7)
}

struct Boxed<F> {
    sig: Signature,
    f: F,
}

/// `TVMFFISafeCallType` of a function made from Rust.
unsafe extern "C" fn call_boxed<F: Fn(&Args<'_>) -> Result<Any>>(
    ctx: *mut c_void,
    args: *const RawAny,
    num_args: i32,
    result: *mut RawAny,
) -> i32 {
    // SAFETY: `ctx` is the `Boxed<F>` this function was created with, alive
    // while the function is.
    let boxed = unsafe { &*ctx.cast::<Boxed<F>>() };
    // SAFETY: the runtime passes `num_args` valid values and a writable
    // result (the safe-call contract).
    unsafe { crate::export::call_packed(&boxed.sig, args, num_args, result, &boxed.f) }
}

unsafe extern "C" fn drop_boxed<F>(ctx: *mut c_void) {
    let _ = guard("function deleter", || {
        // SAFETY: the runtime releases the function once, with our `ctx`.
        drop(unsafe { Box::from_raw(ctx.cast::<Boxed<F>>()) });
        Ok(())
    });
}

// Printing a value asks the runtime (`ffi.ReprPrint`), as every language does.
impl core::fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.type_index() {
            sys::NONE => f.write_str("None"),
            sys::INT => write!(f, "{}", self.raw().bits as i64),
            sys::BOOL => write!(
                f,
                "{}",
                if self.raw().bits != 0 {
                    "True"
                } else {
                    "False"
                }
            ),
            sys::FLOAT => write!(f, "{:?}", f64::from_bits(self.raw().bits)),
            _ => {
                if let Some(s) = self.get::<&str>() {
                    return write!(f, "{s:?}");
                }
                match call_global("ffi.ReprPrint", &[*self]) {
                    Ok(text) => match text.get::<&str>() {
                        Some(s) => f.write_str(s),
                        None => write!(f, "<{}>", self.type_key()),
                    },
                    Err(_) => write!(f, "<{}>", self.type_key()),
                }
            }
        }
    }
}

impl core::fmt::Debug for Any {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.view().fmt(f)
    }
}

/// Registers `f` as the global `name` from a library's static initializer
/// (`#[tvmffi::global]`): replaces an earlier registration of the name, and
/// keeps the library loaded for the life of the process, so the global
/// never outlives its code. A failure is printed: nothing can raise while a
/// library loads.
#[doc(hidden)]
pub fn register_global_at_load(name: &str, f: Result<Function>) {
    match f.and_then(|f| f.register_global(name, true)) {
        Ok(()) => keep_loaded(),
        Err(e) => eprintln!(
            "tvmffi: cannot register the global `{name}` when the library loads: {}: {}",
            e.kind(),
            e.message()
        ),
    }
}

/// Marks the shared object holding this code as never unloaded. No lock is
/// held around the `dlopen` (a once-lock there deadlocks against a library
/// constructor on another thread, which holds the loader's lock): threads
/// that get here at once each mark it, which is harmless.
fn keep_loaded() {
    #[cfg(unix)]
    {
        use core::sync::atomic::{AtomicBool, Ordering};
        static DONE: AtomicBool = AtomicBool::new(false);
        if DONE.load(Ordering::Acquire) {
            return;
        }
        let here = keep_loaded as *const () as *const core::ffi::c_void;
        let Some((_, name)) = crate::runtime::object_of(here) else {
            return;
        };
        // SAFETY: RTLD_NOLOAD maps nothing new: it takes a reference to
        // the loaded object named by its own path and marks it
        // RTLD_NODELETE; the reference is kept.
        unsafe {
            libc::dlopen(
                name.as_ptr(),
                libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
            )
        };
        DONE.store(true, Ordering::Release);
    }
}
