//! The core table the C++ layer calls back through: what the exported C++
//! functions of the official library (`Module::LoadFromFile`, the base
//! `ModuleObj` methods, `VisitContextSymbols`, built-in globals) run here.
//! It sits above the loader it calls; `cxx` holds the low-level bridge.
//!
//! The table is plain function pointers, not exported symbols: it is handed
//! to the C++ layer by an initialiser that runs when the library is loaded,
//! before any C++ entry point can be called.

use crate::abi::*;
use crate::module::objects::cxx::{function_handle, module_arg, text_arg, write_text};
use crate::runtime::model::boundary::catch_to_code;
use crate::runtime::model::error::{Error, ErrorKind};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{Any, AnyView, Function, ObjectRef, call::registry};
use core::ffi::{CStr, c_char, c_int, c_void};
use core::ptr::NonNull;

/// `TVMFFIRsCoreOps` of `src/cxx/bridge.h`.
#[repr(C)]
struct CoreOps {
    get_function: unsafe extern "C" fn(
        *mut TVMFFIObject,
        *const TVMFFIAny,
        i32,
        *mut *mut TVMFFIObject,
    ) -> c_int,
    implements_function:
        unsafe extern "C" fn(*mut TVMFFIObject, *const TVMFFIAny, i32, *mut i32) -> c_int,
    function_info: unsafe extern "C" fn(
        *mut TVMFFIObject,
        *const TVMFFIAny,
        i32,
        i32,
        *mut TVMFFIAny,
    ) -> c_int,
    import_module: unsafe extern "C" fn(*mut TVMFFIObject, *mut TVMFFIObject) -> c_int,
    clear_imports: unsafe extern "C" fn(*mut TVMFFIObject) -> c_int,
    lookup_from_imports:
        unsafe extern "C" fn(*mut TVMFFIObject, *const c_char, *mut *mut TVMFFIObject) -> c_int,
    load_from_file: unsafe extern "C" fn(*const TVMFFIAny, *mut *mut TVMFFIObject) -> c_int,
    visit_context_symbols: unsafe extern "C" fn(*mut TVMFFIObject) -> c_int,
    call_builtin: unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const TVMFFIAny,
        i32,
        *mut TVMFFIAny,
    ) -> c_int,
}
const _: () = assert!(size_of::<CoreOps>() == 9 * size_of::<usize>());

unsafe extern "C" {
    fn tvm_ffi_rs_install_core(ops: *const CoreOps);
}

unsafe extern "C" fn core_get_function(
    m: *mut TVMFFIObject,
    name: *const TVMFFIAny,
    query_imports: i32,
    out: *mut *mut TVMFFIObject,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: the C++ layer passes a live module, a String cell and a
        // writable slot.
        unsafe {
            let name = AnyView::from_raw(&*name).to_owned_any()?;
            let f = module_arg(m)?.get_function_named(&name, query_imports != 0)?;
            out.write(function_handle(f));
        }
        Ok(())
    })
}

unsafe extern "C" fn core_implements_function(
    m: *mut TVMFFIObject,
    name: *const TVMFFIAny,
    query_imports: i32,
    out: *mut i32,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `core_get_function`.
        unsafe {
            let found = module_arg(m)?.implements_function(&text_arg(name)?, query_imports != 0)?;
            out.write(found.into());
        }
        Ok(())
    })
}

unsafe extern "C" fn core_function_info(
    m: *mut TVMFFIObject,
    name: *const TVMFFIAny,
    doc: i32,
    query_imports: i32,
    out: *mut TVMFFIAny,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `core_get_function`.
        let info = unsafe {
            module_arg(m)?.function_info(&text_arg(name)?, doc != 0, query_imports != 0)?
        };
        write_text(out, info);
        Ok(())
    })
}

unsafe extern "C" fn core_import_module(m: *mut TVMFFIObject, other: *mut TVMFFIObject) -> c_int {
    // SAFETY: the C++ layer passes two live modules.
    catch_to_code(|| unsafe { module_arg(m)?.import_base(&*module_arg(other)?) })
}

unsafe extern "C" fn core_clear_imports(m: *mut TVMFFIObject) -> c_int {
    catch_to_code(|| {
        // SAFETY: the C++ layer passes a live module.
        unsafe { module_arg(m)? }.clear_imports_base();
        Ok(())
    })
}

unsafe extern "C" fn core_lookup_from_imports(
    m: *mut TVMFFIObject,
    name: *const c_char,
    out: *mut *mut TVMFFIObject,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: the C++ layer passes a live module, a NUL-terminated name
        // and a writable slot, and holds the lookup lock.
        unsafe {
            let name = CStr::from_ptr(name).to_string_lossy();
            let f = module_arg(m)?.lookup_from_imports_locked(&name)?;
            out.write(f.as_ptr());
        }
        Ok(())
    })
}

unsafe extern "C" fn core_load_from_file(
    path: *const TVMFFIAny,
    out: *mut *mut TVMFFIObject,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: the C++ layer passes a String cell and a writable slot.
        unsafe {
            let m = super::globals::load_from_file(text_arg(path)?.as_bytes())?;
            out.write(m.into_object().into_raw_ptr());
        }
        Ok(())
    })
}

unsafe extern "C" fn core_visit_context_symbols(callback: *mut TVMFFIObject) -> c_int {
    catch_to_code(|| {
        let callback = NonNull::new(callback).ok_or_else(|| Error::value("NULL callback"))?;
        // SAFETY: the C++ caller holds the callback alive.
        let callback = Function::from_object(unsafe { ObjectRef::from_borrowed(callback) })
            .ok_or_else(|| Error::type_error("the callback is not a Function"))?;
        for (name, symbol) in crate::module::backend::context::registered() {
            let (name, symbol) = (
                make_text(name.as_bytes(), TextKind::Str),
                Any::opaque_ptr(symbol as *mut c_void),
            );
            callback.call(&[name.view(), symbol.view()])?;
        }
        Ok(())
    })
}

unsafe extern "C" fn core_call_builtin(
    name: *const c_char,
    cxx_name: *const c_char,
    args: *const TVMFFIAny,
    num_args: i32,
    out: *mut TVMFFIAny,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: the C++ layer passes NUL-terminated names, `num_args`
        // live arguments and a writable slot.
        unsafe {
            let name = CStr::from_ptr(name);
            let f = registry::builtin(name.to_bytes()).ok_or_else(|| {
                Error::new(
                    ErrorKind::NotImplementedError,
                    format!(
                        "{} is not implemented in tvm-ffi-rs yet (it is the built-in global `{}`)",
                        CStr::from_ptr(cxx_name).to_string_lossy(),
                        name.to_string_lossy()
                    ),
                )
            })?;
            // No arguments may come as NULL.
            let args = match usize::try_from(num_args) {
                Ok(n) if n > 0 => core::slice::from_raw_parts(args, n),
                _ => &[],
            };
            // SAFETY: the C++ caller's packed arguments are valid for the call.
            out.write(f.call_raw(args)?.into_raw());
        }
        Ok(())
    })
}

static CORE_OPS: CoreOps = CoreOps {
    get_function: core_get_function,
    implements_function: core_implements_function,
    function_info: core_function_info,
    import_module: core_import_module,
    clear_imports: core_clear_imports,
    lookup_from_imports: core_lookup_from_imports,
    load_from_file: core_load_from_file,
    visit_context_symbols: core_visit_context_symbols,
    call_builtin: core_call_builtin,
};

extern "C" fn install_core() {
    // SAFETY: the table is a static of the declared layout.
    unsafe { tvm_ffi_rs_install_core(&CORE_OPS) }
}

// Hands the core table to the C++ layer when the library is loaded, before
// anything can call a C++ entry point.
crate::platform::at_load::at_load!(INSTALL_CORE = install_core);
