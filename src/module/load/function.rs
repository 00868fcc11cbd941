//! A function of a library module: its `__tvm_ffi_<name>` symbol called
//! with a NULL self, as the reference calls it, holding the module (and so
//! the image) while it lives.

use super::symbols::SafeCall;
use crate::abi::TVMFFIAny;
use crate::module::objects::module::Module;
use crate::runtime::Function;
use crate::runtime::model::error::Error;
use core::ffi::{c_int, c_void};

/// The function `call` of `module`.
pub(super) fn library_function(call: SafeCall, module: &Module) -> Function {
    let ctx = Box::into_raw(Box::new(LibFunction {
        call,
        _module: module.clone(),
    }));
    Function::from_extern_c(ctx.cast(), lib_function_call, Some(lib_function_drop))
}

/// What a function taken from a library holds: the symbol and the module.
struct LibFunction {
    call: SafeCall,
    _module: Module,
}

unsafe extern "C" fn lib_function_call(
    this: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: `this` is the LibFunction installed with this trampoline.
    let f = unsafe { &*this.cast::<LibFunction>() };
    // SAFETY: library functions are called with a NULL self, as the
    // reference does, and the caller's arguments.
    match unsafe { (f.call)(core::ptr::null_mut(), args, num_args, result) } {
        0 => 0,
        code => library_call_failed(code),
    }
}

/// A library function's failure as the reference reports it: -1 whatever
/// nonzero code it answered (-2 included), with its error left raised; one
/// that raised nothing gets [`Error::not_raised`] naming its own code.
#[cold]
#[inline(never)]
fn library_call_failed(code: c_int) -> c_int {
    if !crate::runtime::model::error::has_raised() {
        crate::runtime::model::error::set_raised(Error::not_raised(code).into_object());
    }
    -1
}

unsafe extern "C" fn lib_function_drop(this: *mut c_void) {
    // A panicking drop of the module is contained.
    crate::platform::panic::contain_panic(|| {
        // SAFETY: `this` came from `Box::into_raw` below; dropped once.
        drop(unsafe { Box::from_raw(this.cast::<LibFunction>()) })
    });
}
