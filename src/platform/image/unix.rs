//! What every Unix shares: the loaded object and the dynamic symbol
//! holding an address (`dladdr`), and the process's own symbols (`dlsym`).

use super::symbol::AddressSymbol;
use core::ffi::{CStr, c_void};

/// The loaded object holding `addr` as `dladdr` names it: its file's name
/// (as loaded), its base address, and the name of the dynamic symbol
/// covering `addr` (none when no symbol does).
pub fn symbol_at(addr: usize) -> Option<AddressSymbol> {
    // SAFETY: an all-zero Dl_info is a valid value to be filled in.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return None;
    }
    let text = |p: *const libc::c_char| {
        // SAFETY: dladdr's strings are NUL-terminated and live with the
        // object, which stays loaded during this call; they are copied here.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes().to_vec())
    };
    Some(AddressSymbol {
        file: text(info.dli_fname),
        base: info.dli_fbase as usize,
        symbol: text(info.dli_sname),
    })
}

/// The file of the loaded object (library or executable) whose code or data
/// holds `addr`.
pub fn path_of_address(addr: usize) -> Option<std::path::PathBuf> {
    let file = symbol_at(addr)?.file?;
    Some(crate::platform::os::path_from_bytes(&file).into_owned())
}

/// The address of the symbol `name` in the process's global scope
/// (`RTLD_DEFAULT`), if any object defines it. It takes the system
/// loader's lock: call it with no lock of ours held.
pub fn process_symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: a lookup of a NUL-terminated name in the global scope.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!found.is_null()).then_some(found)
}
