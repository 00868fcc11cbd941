//! `TVMFFIFunction*` and `TVMFFIAnyViewToOwnedAny`.

use super::args::{arg_bytes, arg_handle, arg_out, arg_ref, ffi_call, null_arg, raise_null};
use crate::abi::*;
use crate::runtime::model::boundary::raise_code;
use crate::runtime::{AnyView, Error, Function, ObjectRef, call::registry};
use core::ffi::{c_int, c_void};

/// Creates a Function from a C callback. Calls run `safe_call(self, args,
/// num_args, result)`; `deleter(self)` runs exactly once when the function
/// dies. If both `self` and `deleter` are NULL, `safe_call` receives the
/// function object itself as its first argument (as in the reference).
/// Ownership: `*out` receives a new reference.
/// Errors: ValueError if `safe_call` or `out` is NULL.
///
/// # Safety
/// `safe_call` follows `TVMFFISafeCallType`; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIFunctionCreate(
    self_: *mut c_void,
    safe_call: TVMFFISafeCallType,
    deleter: Option<unsafe extern "C" fn(self_: *mut c_void)>,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { arg_out(out, "out") }?;
        let safe_call = safe_call.ok_or_else(|| null_arg("safe_call"))?;
        *out = Function::from_extern_c(self_, safe_call, deleter)
            .into_object()
            .into_raw()
            .as_ptr()
            .cast();
        Ok(())
    })
}

/// Calls a function: a direct call of its `safe_call`. Arguments are
/// borrowed views; the caller sets `result->type_index = kTVMFFINone` and
/// owns the value left in `*result` on success.
/// Errors: ValueError if `func` is NULL, TypeError if it is not a Function;
/// otherwise whatever the callee raises.
///
/// # Safety
/// `func` is NULL or a live object, and when it is a Function its cell's
/// `safe_call` is set (every creator sets it; `TVMFFIFunctionCreate` refuses
/// NULL); `args` holds `num_args` valid values; `result` is writable.
#[cfg(tvm_ffi_sysv64)]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIFunctionCall(
    func: TVMFFIObjectHandle,
    args: *mut TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // Five instructions on the checked path: the reference's bare
    // `jmp *0x18(%rdi)` (which crashes on either mistake) plus a NULL test
    // and a type-index compare, each with its error path out of line. The
    // compiler would load `safe_call` into a register before the jump (it
    // folds no load into a four-argument tail call), hence assembly; the
    // portable definition below is the same logic.
    //
    // SAFETY: SysV arguments stay in place for the tail calls. A NULL `func`
    // goes to `raise_func_null`; a non-NULL one is live per the contract, so
    // its header is read, and a non-Function goes to `raise_not_function`
    // with `func` still in `rdi`; a Function's `safe_call` is set per the
    // contract and receives the caller's arguments unchanged.
    core::arch::naked_asm!(
        "test rdi, rdi",
        "je {null}",
        "cmp dword ptr [rdi + {type_index}], {function}",
        "jne {not_function}",
        "jmp qword ptr [rdi + {safe_call}]",
        null = sym raise_func_null,
        not_function = sym raise_not_function,
        type_index = const core::mem::offset_of!(TVMFFIObject, type_index),
        function = const kTVMFFIFunction,
        safe_call = const size_of::<TVMFFIObject>() + core::mem::offset_of!(TVMFFIFunctionCell, safe_call),
    )
}

/// The portable definition of `TVMFFIFunctionCall` above.
///
/// # Safety
/// The contract above.
/// cbindgen:ignore
#[cfg(not(tvm_ffi_sysv64))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIFunctionCall(
    func: TVMFFIObjectHandle,
    args: *mut TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    let Some(obj) = core::ptr::NonNull::new(func.cast::<TVMFFIObject>()) else {
        return raise_func_null();
    };
    // SAFETY: a non-NULL handle is a live object per the contract.
    let Ok(cell) = (unsafe { crate::runtime::model::object::cell_at::<TVMFFIFunctionCell>(obj) })
    else {
        // SAFETY: `func` is live, per the contract.
        return unsafe { raise_not_function(func) };
    };
    // SAFETY: the function cell is frozen and `func` is live; a Function's
    // `safe_call` is set, per the contract.
    let safe_call = unsafe { cell.as_ref().safe_call.unwrap_unchecked() };
    // SAFETY: arguments as the caller passed them, per the contract.
    unsafe { safe_call(func, args, num_args, result) }
}

/// Raises the error for a NULL `func`. C ABI, so the hot path can tail-call it.
#[cold]
#[inline(never)]
extern "C" fn raise_func_null() -> c_int {
    raise_null("func")
}

/// Raises the error for calling something that is not a Function; the hot
/// path tail-calls it with its own arguments.
///
/// # Safety
/// `func` is a live object.
#[cold]
#[inline(never)]
unsafe extern "C" fn raise_not_function(func: TVMFFIObjectHandle) -> c_int {
    // SAFETY: per the contract.
    let type_index = unsafe { (*func.cast::<TVMFFIObject>()).type_index };
    raise_code(Error::type_error(format!(
        "`func` is not an ffi.Function (type index {type_index})"
    )))
}

/// Looks up a global function. Ownership: `*out` receives a new reference,
/// or NULL (with return 0) when no function has that name.
/// Errors: ValueError if `name` or `out` is NULL.
///
/// # Safety
/// `name` is NULL or a valid byte array; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIFunctionGetGlobal(
    name: *const TVMFFIByteArray,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (name, out) = unsafe { (arg_bytes(name, "name")?, arg_out(out, "out")?) };
        *out = registry::get_global(name).map_or(core::ptr::null_mut(), |f| {
            f.into_object().into_raw().as_ptr().cast()
        });
        Ok(())
    })
}

/// Checks that a borrowed handle is a Function and takes a reference to it.
fn function_ref(handle: TVMFFIObjectHandle, name: &str) -> crate::runtime::Result<Function> {
    // SAFETY: the caller guarantees the handle is NULL (rejected) or live.
    let obj = unsafe { ObjectRef::from_borrowed(arg_handle(handle, name)?) };
    let type_index = obj.type_index();
    Function::from_object(obj).ok_or_else(|| {
        Error::type_error(format!(
            "`{name}` must be an ffi.Function, got type index {type_index}"
        ))
    })
}

/// Registers `f` as the global function `name`. Ownership: borrowed; the
/// registry keeps its own reference.
/// Errors: RuntimeError "Global Function `name` is already registered" when
/// the name exists and `allow_override` is 0; ValueError/TypeError for NULL
/// or non-function arguments.
///
/// # Safety
/// `name` is NULL or a valid byte array; `f` is NULL or a live object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIFunctionSetGlobal(
    name: *const TVMFFIByteArray,
    f: TVMFFIObjectHandle,
    allow_override: c_int,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let name = unsafe { arg_bytes(name, "name") }?;
        registry::set_global(
            name,
            function_ref(f, "f")?,
            b"",
            allow_override != 0,
            registry::Registration::Function,
        )
    })
}

/// Registers a global function from a method record: its name, its metadata
/// (served by `ffi.GetGlobalFuncMetadata`) and its `method` (a Function).
/// Strings are copied; the function is kept alive by the registry.
/// Errors: as `TVMFFIFunctionSetGlobal`; TypeError if `method` is not a Function.
///
/// # Safety
/// `method_info` is NULL or a valid record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIFunctionSetGlobalFromMethodInfo(
    method_info: *const TVMFFIMethodInfo,
    allow_override: c_int,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let info = unsafe { arg_ref(method_info, "method_info") }?;
        // SAFETY: the record's arrays are valid per the contract.
        let (name, metadata) = unsafe {
            (
                arg_bytes(&info.name, "method_info->name")?,
                arg_bytes(&info.metadata, "method_info->metadata")?,
            )
        };
        // SAFETY: the record's method is a valid value.
        let view = unsafe { AnyView::from_raw(&info.method) };
        let func = view
            .to_object()
            .and_then(Function::from_object)
            .ok_or_else(|| Error::type_error("`method_info->method` must be an ffi.Function"))?;
        registry::set_global(
            name,
            func,
            metadata,
            allow_override != 0,
            registry::Registration::MethodInfo,
        )
    })
}

/// Converts a borrowed value into an owned one: objects gain a reference,
/// raw C strings become Strings, byte-array pointers Bytes, an r-value
/// reference is moved from (NULL is left in its slot); plain values are
/// copied. Ownership: the caller owns `*out`.
/// Errors: ValueError for NULL arguments or an already moved r-value reference.
///
/// # Safety
/// `any_view` is NULL or a valid value; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIAnyViewToOwnedAny(
    any_view: *const TVMFFIAny,
    out: *mut TVMFFIAny,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (view, out) = unsafe { (arg_ref(any_view, "any_view")?, arg_out(out, "out")?) };
        // SAFETY: the value is valid per the contract (an r-value reference
        // is moved from).
        *out = unsafe { AnyView::from_raw(view) }
            .to_owned_any()?
            .into_raw();
        Ok(())
    })
}
