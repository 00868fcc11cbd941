//! The library as a TVM-FFI module: the writer and inspector operations are
//! exported as `__tvm_ffi_<name>` packed functions, so any TVM-FFI runtime
//! (the official Python package included) can `load_module` this library
//! and call them. Each forwards to the global of the same operation; calls
//! bind to this library's own definitions (`-Bsymbolic-functions`), so it is
//! safe to load beside another `libtvm_ffi.so`.

use crate::abi::TVMFFIAny;
use crate::runtime::model::boundary::raise_code;
use crate::runtime::model::error::{error_cell, take_raised};
use crate::runtime::{Error, call::registry};
use core::ffi::{c_char, c_int, c_void};
use std::ffi::CString;

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
    let Some(call) = f
        .as_object()
        .cell::<crate::abi::TVMFFIFunctionCell>()
        .and_then(|cell| cell.safe_call)
    else {
        return raise_code(Error::runtime(format!("{name} has no safe_call")));
    };
    // SAFETY: forwarding the caller's arguments to our own function, which
    // `f` keeps alive.
    let code = unsafe { call(f.as_object().as_ptr().cast(), args, num_args, result) };
    if code != 0 {
        relay_error_to_host();
    }
    code
}

type SetRaisedFromCStr = unsafe extern "C" fn(*const c_char, *const c_char);

/// When another TVM-FFI runtime hosts the process (loaded globally, as the
/// official Python package loads its library) and calls us as a module, it
/// looks for errors in its own thread-local slot: hand ours over to it.
fn relay_error_to_host() {
    // The main program and what it loaded globally (on Windows its own
    // exports: a runtime DLL beside ours would have to be asked by name).
    let global = crate::platform::loader::Handle::this_program();
    // SAFETY: the symbol has this signature in every TVM-FFI runtime.
    let host = unsafe {
        global
            .lib()
            .get::<SetRaisedFromCStr>(b"TVMFFIErrorSetRaisedFromCStr")
    }
    .ok()
    .map(|s| *s);
    let ours: SetRaisedFromCStr = super::error::TVMFFIErrorSetRaisedFromCStr;
    let Some(host) = host.filter(|h| *h as usize != ours as usize) else {
        return;
    };
    let Some(err) = take_raised() else { return };
    let cell = error_cell(&err);
    let text = |a: Option<crate::abi::TVMFFIByteArray>| {
        // SAFETY: the cell's arrays describe the error's own storage.
        let bytes = a
            .map(|a| unsafe { crate::runtime::model::bytes::byte_slice(a) })
            .unwrap_or(b"");
        CString::new(
            bytes
                .iter()
                .copied()
                .filter(|&b| b != 0)
                .collect::<Vec<u8>>(),
        )
        .unwrap_or_default()
    };
    let (kind, message) = (text(cell.map(|c| c.kind)), text(cell.map(|c| c.message)));
    // SAFETY: NUL-terminated strings, valid for the call.
    unsafe { host(kind.as_ptr(), message.as_ptr()) };
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
