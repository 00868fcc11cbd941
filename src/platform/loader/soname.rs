//! `libtvm_ffi.so` for a runtime linked statically into a program.
//!
//! Extensions (C++ ones built with the official headers, the official Rust
//! crate's, `tvmffi`'s) carry `NEEDED libtvm_ffi.so` and bind the ABI's
//! symbols through it. When this runtime is that shared object, nothing is
//! to be done. When it is linked into a program (a Rust host on the runtime
//! rlib, a C program on `libtvm_ffi.a`), the system loader would search its
//! path for a `libtvm_ffi.so`: it fails, or maps another runtime beside
//! this one. So before the first library is loaded, the
//! [soname stub](crate::platform::soname_stub) is loaded in its
//! place: the loader matches every later `NEEDED libtvm_ffi.so` to it and
//! binds the ABI's symbols to this runtime's definitions. Nothing on the
//! loader path is read, and the program needs no `--export-dynamic`.

use super::memfd::{memfd, proc_name, seal};
use crate::platform::soname_stub::{self, AbiExport};
use crate::platform::trust::make_private_dir;
use core::ffi::{CStr, c_void};
use libloading::os::unix::Library;
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

/// The soname extensions link against.
pub(super) const SONAME: &CStr = c"libtvm_ffi.so";

/// Makes sure an object named `libtvm_ffi.so` is loaded, loading the stub
/// for `exports` (this runtime's ABI symbols) when none is. The outcome is
/// remembered and given to every later load (a failure says why no library
/// can bind to this runtime). It is made unlocked: it calls the system
/// loader, whose lock a library constructor loading a module on another
/// thread holds (two threads' first loads at once may each map a stub; the
/// first outcome is kept).
pub(super) fn provide(exports: &'static [AbiExport]) -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    crate::platform::unlocked_once::get_or_make(&DONE, || provide_once(exports))
}

fn provide_once(exports: &[AbiExport]) -> Result<(), String> {
    // SAFETY: RTLD_NOLOAD maps nothing and runs no initialiser; it only
    // takes a reference to an object already loaded, dropped here.
    let present = unsafe { libc::dlopen(SONAME.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    let Some(probe) = exports.first() else {
        return Err("the runtime lists no ABI symbols".into());
    };
    if !present.is_null() {
        // This runtime as the shared object (or a stub of it) binds
        // extensions here; another runtime loaded before the first load
        // would take them, their globals and errors, away from this one.
        // SAFETY: a live handle and a NUL-terminated name; the address is
        // only compared.
        let found = unsafe { libc::dlsym(present, probe.name.as_ptr()) };
        let other = describe(present, found);
        // SAFETY: the reference taken above.
        unsafe { libc::dlclose(present) };
        if core::ptr::eq(found, probe.addr) {
            return Ok(());
        }
        return Err(format!(
            "this runtime is linked into the program, and another libtvm_ffi.so ({other}) was \
             loaded before it could stand for it: extensions that need libtvm_ffi.so would \
             bind to that other runtime, not to this one (load no other TVM-FFI runtime in \
             this process, or link the program against libtvm_ffi.so)"
        ));
    }
    let symbols: Vec<(&[u8], u64, bool)> = exports
        .iter()
        .map(|e| (e.name.to_bytes(), e.addr as u64, e.data))
        .collect();
    let bytes = soname_stub::write(SONAME.to_bytes(), &symbols);
    let (stub, memory_file) = load_stub(&bytes)?;
    // SAFETY: the symbol's address is only compared, never called here.
    let found = unsafe { stub.get::<*const c_void>(probe.name.to_bytes_with_nul()) }
        .map(|s| s.into_raw().cast_const())
        .unwrap_or(core::ptr::null());
    if found != probe.addr {
        // Dropped (closed): nothing has bound to the stub.
        return Err(format!(
            "this runtime is linked into the program, and the system loader does not take the \
             absolute symbols of the libtvm_ffi.so that stands for it as they are (glibc before \
             2.28): {} resolved to {found:p}, not {:p}; link the program against libtvm_ffi.so \
             instead",
            probe.name.to_string_lossy(),
            probe.addr
        ));
    }
    // The stub stays for the life of the process: extensions bind to it,
    // and the loader and tools know it by its memory file's descriptor.
    std::mem::forget(stub);
    std::mem::forget(memory_file);
    Ok(())
}

/// Loads the stub's bytes with RTLD_GLOBAL (libraries that reference the
/// ABI without naming `libtvm_ffi.so` bind to it too): from a sealed memory
/// file by its `/proc` name (the file comes back with it: its descriptor
/// names the image), or else from a private directory, removed once the
/// image is mapped.
fn load_stub(bytes: &[u8]) -> Result<(Library, Option<std::fs::File>), String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot make the libtvm_ffi.so stub: {e}");
    if let Ok(mut file) = memfd(Path::new("libtvm_ffi.so")) {
        file.write_all(bytes).map_err(|e| failed(&e))?;
        seal(&file).map_err(|e| failed(&e))?;
        if let Some(name) = proc_name(&file) {
            return Ok((dlopen_global(&name)?, Some(file)));
        }
    }
    let dir = make_private_dir().map_err(|e| failed(&e))?;
    let path = dir.join("libtvm_ffi.so");
    let loaded = std::fs::write(&path, bytes)
        .map_err(|e| failed(&e))
        .and_then(|()| dlopen_global(&path));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    Ok((loaded?, None))
}

fn dlopen_global(path: &Path) -> Result<Library, String> {
    // SAFETY: the stub has no initialisers and no relocations: mapping it
    // runs no code.
    unsafe { Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_GLOBAL) }
        .map_err(|e| format!("cannot load the libtvm_ffi.so stub: {e}"))
}

/// The file an object loaded under [`SONAME`] came from, for messages.
fn describe(handle: *mut c_void, symbol: *mut c_void) -> String {
    // SAFETY: an all-zero Dl_info is a valid value to be filled in.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    let named = !symbol.is_null() && unsafe { libc::dladdr(symbol, &mut info) } != 0;
    if named && !info.dli_fname.is_null() {
        // SAFETY: a NUL-terminated name the loader keeps.
        return unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned();
    }
    format!("handle {handle:p}")
}
