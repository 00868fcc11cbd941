//! Which TVM-FFI runtime this crate calls, and the refusal to run where two
//! would be mixed.

use crate::error::Result;

// Host mode: the runtime's C functions come from the tvm-ffi-rs rlib.
#[cfg(feature = "host")]
use tvm_ffi as _;

/// Fails when the process has a second TVM-FFI runtime besides the one this
/// crate calls: objects, errors and type indices of one are meaningless to
/// the other. Only host mode can get there (an extension binds to the
/// process's runtime and embeds none); checked once.
pub fn check_single_runtime() -> Result<()> {
    #[cfg(all(feature = "host", unix))]
    {
        use std::sync::OnceLock;
        static VERDICT: OnceLock<core::result::Result<(), String>> = OnceLock::new();
        return VERDICT.get_or_init(find_other_runtime).clone().map_err(crate::Error::runtime_error);
    }
    #[allow(unreachable_code)]
    Ok(())
}

#[cfg(all(feature = "host", unix))]
fn find_other_runtime() -> core::result::Result<(), String> {
    let ours = crate::sys::TVMFFIFunctionCall as *const () as *mut core::ffi::c_void;
    // SAFETY: a NUL-terminated symbol name; RTLD_DEFAULT searches the
    // process's global scope.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"TVMFFIFunctionCall".as_ptr()) };
    if global.is_null() || global == ours {
        return Ok(());
    }
    let name = |addr: *mut core::ffi::c_void| {
        // SAFETY: dladdr only reads the loader's tables; `info` is writable.
        let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
        // SAFETY: as above; `dli_fname` is NUL-terminated when set.
        match unsafe { libc::dladdr(addr, &mut info) } {
            0 => "<unknown>".to_owned(),
            _ if info.dli_fname.is_null() => "<unknown>".to_owned(),
            _ => unsafe { core::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned(),
        }
    };
    Err(format!(
        "two TVM-FFI runtimes in one process: {} links one in (tvmffi feature `host`) and {} \
         is loaded too; build libraries loaded into a TVM-FFI process without the `host` \
         feature, so they use the process's runtime",
        name(ours),
        name(global)
    ))
}
