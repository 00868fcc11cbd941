//! Which TVM-FFI runtime this crate calls, and the refusal to run where two
//! would be mixed.

use crate::error::Result;

/// Fails when the process has a second TVM-FFI runtime besides one linked
/// into the object holding this code (a program on `tvmffi-host`, or a
/// library that wrongly depends on it): objects, errors and type indices of
/// one are meaningless to the other. An extension that embeds no runtime
/// passes whatever the process holds. Checked once.
pub fn check_single_runtime() -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::sync::OnceLock;
        static VERDICT: OnceLock<core::result::Result<(), String>> = OnceLock::new();
        return VERDICT
            .get_or_init(find_other_runtime)
            .clone()
            .map_err(crate::error::Error::runtime_error);
    }
    #[allow(unreachable_code)]
    Ok(())
}

#[cfg(target_os = "linux")]
fn find_other_runtime() -> core::result::Result<(), String> {
    use core::ffi::{CStr, c_int, c_void};
    // The object this code is linked into holds our runtime.
    let ours = object_of(check_single_runtime as *const () as *const c_void);
    let mut names: Vec<Vec<u8>> = Vec::new();
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid entry, and `data` is the vector
        // below, used only during the walk.
        let (info, names) = unsafe { (&*info, &mut *data.cast::<Vec<Vec<u8>>>()) };
        if !info.dlpi_name.is_null() {
            // SAFETY: a NUL-terminated name owned by the loader.
            names.push(
                unsafe { CStr::from_ptr(info.dlpi_name) }
                    .to_bytes()
                    .to_vec(),
            );
        }
        0
    }
    // SAFETY: the callback matches the loader's contract.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&mut names as *mut Vec<Vec<u8>>).cast()) };
    let mut definers: Vec<(usize, std::ffi::CString)> = Vec::new();
    for name in names {
        let Ok(cname) = std::ffi::CString::new(name) else {
            continue;
        };
        let path = if cname.is_empty() {
            core::ptr::null()
        } else {
            cname.as_ptr()
        };
        // SAFETY: RTLD_NOLOAD only takes a new reference to a loaded
        // object (released below); NULL names the program.
        let handle = unsafe { libc::dlopen(path, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if handle.is_null() {
            continue;
        }
        // SAFETY: a live handle and a NUL-terminated symbol name.
        let sym = unsafe { libc::dlsym(handle, c"TVMFFIFunctionCall".as_ptr()) };
        let definer = (!sym.is_null()).then(|| object_of(sym)).flatten();
        // SAFETY: the reference taken above.
        unsafe { libc::dlclose(handle) };
        if let Some(d) = definer
            && !definers.iter().any(|(base, _)| *base == d.0)
        {
            definers.push(d);
        }
    }
    let Some(ours) = ours else { return Ok(()) };
    if !definers.iter().any(|(base, _)| *base == ours.0) {
        return Ok(());
    }
    match definers.iter().find(|(base, _)| *base != ours.0) {
        Some((_, other)) => Err(format!(
            "two TVM-FFI runtimes in one process: {} links one in (it depends on tvmffi-host) \
             and {} is loaded too; a library loaded into a TVM-FFI process depends on \
             tvmffi only, and uses the process's runtime",
            ours.1.to_string_lossy(),
            other.to_string_lossy()
        )),
        None => Ok(()),
    }
}

/// The base address and file name of the loaded object holding `addr`.
#[cfg(unix)]
pub(crate) fn object_of(addr: *const core::ffi::c_void) -> Option<(usize, std::ffi::CString)> {
    // SAFETY: dladdr only reads the loader's tables; `info` is writable.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated name owned by the loader.
    let name = unsafe { core::ffi::CStr::from_ptr(info.dli_fname) }.to_owned();
    Some((info.dli_fbase as usize, name))
}
