//! The built-in global functions (`ffi.*`) the reference runtime registers,
//! with the same names and calling conventions.

use crate::abi::*;
use crate::runtime::call::function::{Function, arg_type_error};
use crate::runtime::call::registry::{self, Globals};
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{
    ArrayRet, BytesAny, BytesArg, ObjectT, Owned, Str, StrAny, StrRet,
};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{invalid_object, kwargs_object};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::model::type_table::Table;
use core::ffi::c_void;

/// Describes the core's built-in types beyond their keys and indices:
/// reflected layouts and methods, visitor and mutator attributes.
pub fn register_types(t: &mut Table) {
    crate::runtime::reflect::reflected::register(t);
    crate::runtime::algo::structural_key::register_type(t);
    crate::runtime::algo::structural_visit::register_attrs(t);
    crate::runtime::algo::structural_mutate::register_attrs(t);
}

/// Registers every built-in global of the core.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.FunctionListGlobalNamesFunctor",
        || -> Function { Ok(list_global_names_functor()) }
    ));
    g.add(typed_fn!(
        "ffi.FunctionRemoveGlobal",
        |name: Str<'_>| -> bool { Ok(registry::remove_global(name.0)) }
    ));
    g.add(typed_fn!(
        "ffi.GetGlobalFuncMetadata",
        |name: Str<'_>| -> StrRet {
            match registry::metadata(name.0) {
                Some(meta) => Ok(StrRet(meta.into())),
                None => Err(Error::runtime(format!(
                    "Global Function is not found: {}",
                    String::from_utf8_lossy(name.0)
                ))),
            }
        }
    ));
    // A string (bytes) value comes back as it is, as in the reference.
    g.add(typed_fn!("ffi.String", |s: Str<'_>| -> StrAny {
        Ok(StrAny(s.to_value()?))
    }));
    g.add(typed_fn!("ffi.Bytes", |b: BytesArg<'_>| -> BytesAny {
        Ok(BytesAny(b.to_value()?))
    }));
    g.add(typed_fn!(
        "ffi.FunctionFromExternC",
        |this: *mut c_void, safe_call: *mut c_void, deleter: *mut c_void| -> Function {
            function_from_extern_c(this, safe_call, deleter)
        }
    ));
    g.packed(
        "ffi.Shape",
        Function::from_closure(|args| {
            let shape = crate::runtime::value::scalar::try_new_shape(args.len(), |i| {
                args.get(i)
                    .as_i64()
                    .ok_or_else(|| Error::value("Expect shape to take list of int arguments"))
            })?;
            Ok(Any::from(shape))
        }),
    );
    g.add(typed_fn!("ffi.GetInvalidObject", || -> Owned<ObjectT> {
        Ok(Owned::new(invalid_object()))
    }));
    // The same marker under its name in apache-tvm-ffi 0.1.6 to 0.1.8.post2,
    // whose Python package calls it at import (later releases dropped the
    // name): an addition, so that those releases run on this library.
    g.add(typed_fn!(
        "ffi.MapGetMissingObject",
        || -> Owned<ObjectT> { Ok(Owned::new(invalid_object())) }
    ));
    crate::runtime::value::containers::register(g);
    g.add(typed_fn!("ffi.GetKwargsObject", || -> Owned<ObjectT> {
        Ok(Owned::new(kwargs_object()))
    }));
    g.add(typed_fn!(
        "ffi.GetRegisteredTypeKeys",
        || -> ArrayRet<StrRet> {
            let keys = crate::runtime::model::type_table::registered_keys()
                .iter()
                .map(|k| make_text(k, TextKind::Str))
                .collect();
            Ok(ArrayRet::new(crate::runtime::value::seq::new_array(keys)))
        }
    ));
    g.add(crate::runtime::reflect::reflected::visit_interrupt_global());
    g.add(typed_fn!("ffi.DeepCopy", |value: AnyView<'_>| -> Any {
        crate::runtime::algo::deep_copy::deep_copy(value)
    }));
    crate::runtime::algo::serialization::register(g);
    crate::runtime::algo::repr::register(g);
    crate::runtime::algo::recursive_hash::register(g);
    crate::runtime::algo::recursive_compare::register(g);
    crate::runtime::algo::structural_key::register(g);
    crate::runtime::algo::structural_equal::register(g);
    crate::runtime::algo::structural_hash::register(g);
    crate::runtime::algo::structural_visit::register(g);
    crate::runtime::algo::structural_mutate::register(g);
    crate::runtime::algo::visit_error_context::register(g);
    crate::runtime::reflect::dataclass::register(g);
}

/// `ffi.FunctionListGlobalNamesFunctor()`: a functor over a snapshot of the
/// names, `f(-1)` = count, `f(i)` = i-th name (a value the snapshot shares:
/// the caller's release frees nothing, see [`registry::names`]).
fn list_global_names_functor() -> Function {
    let names = registry::names();
    Function::from_closure(move |args| {
        const NAME: &str = "ffi.FunctionListGlobalNamesFunctor.<functor>";
        args.expect_len(NAME, 1)?;
        let v = args.get(0);
        let i = v
            .as_i64()
            .ok_or_else(|| arg_type_error(NAME, 0, "int", v))?;
        if i < 0 {
            return Ok(Any::from(names.len() as i64));
        }
        let name = names
            .get(i as usize)
            .ok_or_else(|| Error::index(format!("Index {i} out of bounds {}", names.len())))?;
        Ok(name.clone())
    })
}

/// `ffi.FunctionFromExternC(self, safe_call, deleter)`.
fn function_from_extern_c(
    this: *mut c_void,
    safe_call: *mut c_void,
    deleter: *mut c_void,
) -> Result<Function> {
    const NAME: &str = "ffi.FunctionFromExternC";
    // SAFETY: the caller hands us C function pointers of these signatures
    // (or NULL), which is the documented contract of this global.
    let (safe_call, deleter) = unsafe {
        (
            core::mem::transmute::<*mut c_void, TVMFFISafeCallType>(safe_call),
            core::mem::transmute::<*mut c_void, Option<unsafe extern "C" fn(*mut c_void)>>(deleter),
        )
    };
    let safe_call = safe_call.ok_or_else(|| Error::value(format!("{NAME}: safe_call is NULL")))?;
    Ok(Function::from_extern_c(this, safe_call, deleter))
}
