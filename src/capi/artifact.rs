//! The library as a TVM-FFI module: the writer and inspector operations are
//! exported as `__tvm_ffi_<name>` packed functions, so any TVM-FFI runtime
//! (the official Python package included) can `load_module` this library
//! and call them. Each forwards to the global of the same operation; calls
//! bind to this library's own definitions (`-Bsymbolic-functions`), so it is
//! safe to load beside another `libtvm_ffi.so`.

use crate::abi::TVMFFIAny;
use crate::core::function::raise_code;
use crate::core::{Error, registry};
use core::ffi::{c_int, c_void};

/// Calls the global `name` with the packed arguments.
///
/// # Safety
/// The packed calling convention's contract.
unsafe fn forward(
    name: &str,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    let Some(f) = registry::get_global(name.as_bytes()) else {
        return raise_code(Error::runtime(format!("{name} is not registered")));
    };
    let handle = f.as_object().as_ptr();
    // SAFETY: a Function keeps its cell after the header.
    let cell = unsafe {
        &*handle
            .cast::<u8>()
            .add(size_of::<crate::abi::TVMFFIObject>())
            .cast::<crate::abi::TVMFFIFunctionCell>()
    };
    match cell.safe_call {
        // SAFETY: forwarding the caller's arguments to our own function.
        Some(call) => unsafe { call(handle.cast(), args, num_args, result) },
        None => raise_code(Error::runtime(format!("{name} has no safe_call"))),
    }
}

macro_rules! export_packed {
    ($($symbol:ident => $global:literal),* $(,)?) => {$(
        #[doc = concat!("Packed-convention export of `", $global, "`.")]
        ///
        /// # Safety
        /// The packed calling convention's contract.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $symbol(
            _self: *mut c_void,
            args: *const TVMFFIAny,
            num_args: i32,
            result: *mut TVMFFIAny,
        ) -> c_int {
            // SAFETY: forwarded contract.
            unsafe { forward($global, args, num_args, result) }
        }
    )*};
}

export_packed! {
    __tvm_ffi_library_bin_write => "ffi.LibraryBinWrite",
    __tvm_ffi_library_bin_inspect => "ffi.LibraryBinInspect",
    __tvm_ffi_library_bin_to_c_source => "ffi.LibraryBinToCSource",
    __tvm_ffi_library_bin_write_object => "ffi.LibraryBinWriteObject",
    __tvm_ffi_library_bin_build_shared_library => "ffi.LibraryBinBuildSharedLibrary",
    __tvm_ffi_inspect_file => "ffi.InspectFile",
}
