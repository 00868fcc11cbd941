//! The built-in global functions (`ffi.*`) the reference runtime registers,
//! with the same names and calling conventions.

use super::any::{Any, AnyView};
use super::function::{Args, Function, arg_type_error};
use super::string::{TextKind, make_text};
use super::{Error, ObjectRef, Result, registry};
use crate::abi::*;
use std::sync::{Arc, LazyLock};

/// Calls `add(name, function)` for every built-in global.
pub fn register(add: &mut dyn FnMut(&'static str, Function)) {
    add(
        "ffi.FunctionListGlobalNamesFunctor",
        Function::from_closure(list_global_names_functor),
    );
    add(
        "ffi.FunctionRemoveGlobal",
        Function::from_closure(|args| {
            let name = str_arg("ffi.FunctionRemoveGlobal", args, 0, 1)?;
            Ok(Any::from(registry::remove_global(name)))
        }),
    );
    add(
        "ffi.GetGlobalFuncMetadata",
        Function::from_closure(|args| {
            let name = str_arg("ffi.GetGlobalFuncMetadata", args, 0, 1)?;
            match registry::metadata(name) {
                Some(meta) => Ok(make_text(&meta, TextKind::Str)),
                None => Err(Error::runtime(format!(
                    "Global Function is not found: {}",
                    String::from_utf8_lossy(name)
                ))),
            }
        }),
    );
    add(
        "ffi.String",
        Function::from_closure(|args| {
            Ok(make_text(str_arg("ffi.String", args, 0, 1)?, TextKind::Str))
        }),
    );
    add(
        "ffi.Bytes",
        Function::from_closure(|args| {
            args.expect_len("ffi.Bytes", 1)?;
            let v = args.get(0);
            let bytes = v
                .as_bytes()
                .ok_or_else(|| arg_type_error("ffi.Bytes", 0, "ffi.Bytes", v))?;
            Ok(make_text(bytes, TextKind::Bytes))
        }),
    );
    add(
        "ffi.FunctionFromExternC",
        Function::from_closure(function_from_extern_c),
    );
    add(
        "ffi.Shape",
        Function::from_closure(|args| {
            let dims = (0..args.len())
                .map(|i| {
                    args.get(i)
                        .as_i64()
                        .ok_or_else(|| Error::value("Expect shape to take list of int arguments"))
                })
                .collect::<Result<Vec<i64>>>()?;
            Ok(Any::from(super::scalar::new_shape(&dims)))
        }),
    );
    add(
        "ffi.GetInvalidObject",
        Function::from_closure(|_| Ok(Any::from(invalid_object()))),
    );
    super::containers::register(add);
    add(
        "ffi.GetKwargsObject",
        Function::from_closure(|_| Ok(Any::from(singleton(&KWARGS)))),
    );
}

/// Process-wide plain `ffi.Object` markers handed to frontends.
static INVALID: LazyLock<ObjectRef> =
    LazyLock::new(|| super::object::new_object(kTVMFFIObject, ()));
static KWARGS: LazyLock<ObjectRef> = LazyLock::new(|| super::object::new_object(kTVMFFIObject, ()));

fn singleton(cell: &LazyLock<ObjectRef>) -> ObjectRef {
    ObjectRef::clone(cell)
}

/// The process-wide "missing" marker (`ffi.GetInvalidObject`).
pub fn invalid_object() -> ObjectRef {
    singleton(&INVALID)
}

/// Argument `i` of `n` as string text.
fn str_arg<'a>(name: &str, args: Args<'a>, i: usize, n: usize) -> Result<&'a [u8]> {
    args.expect_len(name, n)?;
    let v = args.get(i);
    v.as_str_bytes()
        .ok_or_else(|| arg_type_error(name, i, "ffi.String", v))
}

/// Argument `i` as an opaque pointer.
fn ptr_arg(name: &str, args: Args<'_>, i: usize) -> Result<*mut core::ffi::c_void> {
    let v: AnyView<'_> = args.get(i);
    v.as_opaque_ptr()
        .ok_or_else(|| arg_type_error(name, i, "void*", v))
}

/// `ffi.FunctionListGlobalNamesFunctor()`: a functor over a snapshot of the
/// names, `f(-1)` = count, `f(i)` = i-th name.
fn list_global_names_functor(args: Args<'_>) -> Result<Any> {
    args.expect_len("ffi.FunctionListGlobalNamesFunctor", 0)?;
    let names: Arc<[Box<[u8]>]> = registry::list_names().into();
    let functor = Function::from_closure(move |args| {
        const NAME: &str = "ffi.FunctionListGlobalNamesFunctor.<functor>";
        args.expect_len(NAME, 1)?;
        let v = args.get(0);
        let i = v
            .as_i64()
            .ok_or_else(|| arg_type_error(NAME, 0, "int", v))?;
        if i < 0 {
            return Ok(Any::from(names.len() as i64));
        }
        let name = names.get(i as usize).ok_or_else(|| {
            Error::index(format!(
                "index {i} out of range for {} global names",
                names.len()
            ))
        })?;
        Ok(make_text(name, TextKind::Str))
    });
    Ok(Any::from(functor.into_object()))
}

/// `ffi.FunctionFromExternC(self, safe_call, deleter)`.
fn function_from_extern_c(args: Args<'_>) -> Result<Any> {
    const NAME: &str = "ffi.FunctionFromExternC";
    args.expect_len(NAME, 3)?;
    let this = ptr_arg(NAME, args, 0)?;
    let safe_call = ptr_arg(NAME, args, 1)?;
    let deleter = ptr_arg(NAME, args, 2)?;
    // SAFETY: the caller hands us C function pointers of these signatures
    // (or NULL), which is the documented contract of this global.
    let (safe_call, deleter) = unsafe {
        (
            core::mem::transmute::<*mut core::ffi::c_void, TVMFFISafeCallType>(safe_call),
            core::mem::transmute::<
                *mut core::ffi::c_void,
                Option<unsafe extern "C" fn(*mut core::ffi::c_void)>,
            >(deleter),
        )
    };
    let safe_call = safe_call.ok_or_else(|| Error::value(format!("{NAME}: safe_call is NULL")))?;
    Ok(Any::from(
        Function::from_extern_c(this, safe_call, deleter).into_object(),
    ))
}
