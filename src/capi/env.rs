//! `TVMFFIEnv*` (declared in `tvm/ffi/extra/c_env_api.h`).

use super::args::{arg_cstr, ffi_call, ffi_call_or};
use crate::abi::{DLPackManagedTensorAllocator, DLTensor, TVMFFIObjectHandle};
use crate::runtime::value::env;
use core::ffi::{c_char, c_int, c_void};

/// A device stream handle (e.g. `cudaStream_t`).
pub type TVMFFIStreamHandle = *mut c_void;

/// Sets this thread's current stream for a device; the previous one is
/// written to `opt_out_original_stream` when it is not NULL. Streams are
/// per thread: a kernel called on this thread sees what its caller set.
/// A device type or id outside 0 to 2^20 - 1 is refused (InternalError).
///
/// # Safety
/// `opt_out_original_stream` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvSetStream(
    device_type: i32,
    device_id: i32,
    stream: TVMFFIStreamHandle,
    opt_out_original_stream: *mut TVMFFIStreamHandle,
) -> c_int {
    ffi_call(|| {
        let old = env::set_stream(device_type, device_id, stream)?;
        if !opt_out_original_stream.is_null() {
            // SAFETY: checked non-null; writable per the contract.
            unsafe { opt_out_original_stream.write(old) };
        }
        Ok(())
    })
}

/// This thread's current stream for a device, NULL if none was set.
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIEnvGetStream(device_type: i32, device_id: i32) -> TVMFFIStreamHandle {
    ffi_call_or(core::ptr::null_mut(), || {
        env::get_stream(device_type, device_id)
    })
}

/// Asks the frontend (e.g. Python) whether a signal arrived. Returns 0 if
/// not (or if no frontend registered `PyErr_CheckSignals`), -1 if the
/// frontend raised an error of its own (no FFI error is set).
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIEnvCheckSignals() -> c_int {
    ffi_call_or(0, env::check_signals)
}

/// Registers a frontend function: `PyErr_CheckSignals`,
/// `PyGILState_Ensure` or `PyGILState_Release`.
/// Errors: ValueError "Unknown env API name" for other names or NULL `name`.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `symbol` has the named signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvRegisterCAPI(name: *const c_char, symbol: *mut c_void) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        unsafe { env::register_capi(arg_cstr(name, "name")?, symbol) }
    })
}

/// Sets this thread's DLPack tensor allocator (NULL clears it); with
/// `write_to_global_context` also the process-wide fallback other threads
/// use. This thread's previous allocator is written to
/// `opt_out_original_allocator` when it is not NULL.
///
/// # Safety
/// `allocator` follows the DLPack allocator contract;
/// `opt_out_original_allocator` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvSetDLPackManagedTensorAllocator(
    allocator: DLPackManagedTensorAllocator,
    write_to_global_context: c_int,
    opt_out_original_allocator: *mut DLPackManagedTensorAllocator,
) -> c_int {
    ffi_call(|| {
        let old = env::set_allocator(allocator, write_to_global_context != 0);
        if !opt_out_original_allocator.is_null() {
            // SAFETY: checked non-null; writable per the contract.
            unsafe { opt_out_original_allocator.write(old) };
        }
        Ok(())
    })
}

/// This thread's DLPack tensor allocator, else the process-wide one, else NULL.
#[unsafe(no_mangle)]
pub extern "C" fn TVMFFIEnvGetDLPackManagedTensorAllocator() -> DLPackManagedTensorAllocator {
    ffi_call_or(None, env::get_allocator)
}

/// Allocates a Tensor shaped like `prototype` (its shape, dtype, device) with
/// the environment's DLPack allocator. Ownership: `*out` receives a new
/// reference; the allocator's deleter runs when the Tensor dies.
/// Errors: RuntimeError when no allocator is set or it returns NULL; the
/// allocator's own error otherwise.
///
/// # Safety
/// `prototype` is NULL or a valid DLTensor; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvTensorAlloc(
    prototype: *mut DLTensor,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { super::args::arg_out(out, "out") }?;
        if prototype.is_null() {
            return Err(super::args::null_arg("prototype"));
        }
        // SAFETY: a valid prototype per the contract.
        *out = unsafe { env::tensor_alloc(prototype) }?
            .into_raw()
            .as_ptr()
            .cast();
        Ok(())
    })
}

/// Finds `func_name` for a loaded library: in the imports of the module
/// the library received in `__tvm_ffi__library_ctx` (its C++ `ModuleObj*`,
/// as in the reference), then in the global registry. Ownership: `*out` is
/// borrowed, kept alive by the module (lookups are cached) and, for a
/// loaded library, as long as the library stays mapped (the reference's
/// dangles once the module goes while the library stays: a second load of
/// the same file).
/// Errors: RuntimeError "Cannot find function ..." when absent; TypeError
/// if `library_ctx` is not a module; ValueError for NULLs.
///
/// # Safety
/// `library_ctx` is NULL or the value written to `__tvm_ffi__library_ctx`;
/// `func_name` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvModLookupFromImports(
    library_ctx: TVMFFIObjectHandle,
    func_name: *const c_char,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe {
            arg_cstr(func_name, "func_name")?;
            super::args::arg_out(out, "out")?
        };
        // SAFETY: per the contract the context is the `ModuleObj*` the
        // loader wrote (the reference's convention), of a live module.
        let module = unsafe { crate::module::Module::from_cxx_ptr(library_ctx) }?;
        // SAFETY: `func_name` is NUL-terminated per the contract.
        let name = unsafe { core::ffi::CStr::from_ptr(func_name) };
        let found = module.lookup_from_imports(name)?;
        // A library keeps the handle in its own variables, which outlive
        // the module when the same file loads again: the function stays
        // as long as the library does.
        // SAFETY: a live function the module's lookup cache holds.
        let func = unsafe { crate::runtime::ObjectRef::from_borrowed(found) };
        crate::module::load::library::keep_looked_up(&module, &func);
        *out = found.as_ptr().cast();
        Ok(())
    })
}

/// Registers a `void*` value written into the variable `name` of every
/// library loaded afterwards (if it exports one).
/// Errors: ValueError if `name` is NULL.
///
/// # Safety
/// `name` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvModRegisterContextSymbol(
    name: *const c_char,
    symbol: *mut c_void,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let name = unsafe { arg_cstr(name, "name") }?;
        crate::module::backend::context::register(&String::from_utf8_lossy(name), symbol);
        Ok(())
    })
}

/// Registers a symbol of the system library (statically linked code), found
/// by `ffi.SystemLib([prefix])` modules as `__tvm_ffi_<prefix><name>` or
/// `__tvm_ffi_<name>`. Re-registering with another address warns.
/// Errors: ValueError if `name` is NULL.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `symbol` follows the symbol convention.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIEnvModRegisterSystemLibSymbol(
    name: *const c_char,
    symbol: *mut c_void,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let name = unsafe { arg_cstr(name, "name") }?;
        crate::module::load::register_system_symbol(&String::from_utf8_lossy(name), symbol);
        Ok(())
    })
}
