//! Where a library module finds its symbols: a shared library's image, or
//! the process-wide table of system-library symbols
//! (`TVMFFIEnvModRegisterSystemLibSymbol`), with the lookups a load makes.

use super::image::{Image, lock};
use crate::abi::TVMFFIAny;
use crate::module::format::symbols::FUNCTION_PREFIX;
use crate::platform::image;
use core::ffi::{c_int, c_void};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

/// Where a library module finds its symbols.
pub(super) enum Symbols {
    /// A shared library and the path it was opened from.
    Dso(Arc<Image>, PathBuf),
    /// The system library table, with a symbol prefix tried first.
    System(String),
}

impl Symbols {
    /// The address of `name`, if present.
    pub(super) fn get(&self, name: &str) -> Option<*mut c_void> {
        match self {
            Symbols::Dso(image, _) => image.get(name),
            Symbols::System(prefix) => {
                system_symbol(&format!("{prefix}{name}")).or_else(|| system_symbol(name))
            }
        }
    }

    /// The address of `name`, if present, and how many bytes from it may be
    /// read (or, with `need_write`, written): those in the loaded segment
    /// that holds it. A system-library symbol in no loaded segment
    /// (registered from the heap) is trusted for `fallback(addr)` bytes, as
    /// its registrant promised.
    pub(super) fn locate(
        &self,
        name: &str,
        need_write: bool,
        fallback: impl FnOnce(*mut c_void) -> usize,
    ) -> Option<(*mut c_void, Option<usize>)> {
        match self {
            Symbols::Dso(image, _) => image
                .locate(name, need_write)
                .map(|(addr, extent)| (addr as *mut c_void, extent)),
            Symbols::System(_) => {
                let addr = self.get(name)?;
                let extent =
                    image::mapped_extent(addr, need_write).or_else(|| Some(fallback(addr)));
                Some((addr, extent))
            }
        }
    }

    /// The path of a shared library, or which system library.
    pub(super) fn describe(&self) -> String {
        match self {
            Symbols::Dso(_, path) => path.display().to_string(),
            Symbols::System(prefix) => format!("system library (prefix `{prefix}`)"),
        }
    }

    /// The function symbol of `name` (`__tvm_ffi_<prefix><name>` first for
    /// the system library).
    pub(super) fn function(&self, name: &str) -> Option<SafeCall> {
        let addr = match self {
            Symbols::Dso(..) => self.get(&format!("{FUNCTION_PREFIX}{name}")),
            Symbols::System(prefix) => system_symbol(&format!("{FUNCTION_PREFIX}{prefix}{name}"))
                .or_else(|| system_symbol(&format!("{FUNCTION_PREFIX}{name}"))),
        }?;
        // SAFETY: by convention `__tvm_ffi_<name>` is a TVMFFISafeCallType.
        Some(unsafe { core::mem::transmute::<*mut c_void, SafeCall>(addr) })
    }
}

pub(super) type SafeCall =
    unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, i32, *mut TVMFFIAny) -> c_int;

/// `TVMFFIEnvModRegisterSystemLibSymbol` entries.
static SYSTEM_SYMBOLS: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Default::default);

/// Registers a system library symbol (warns when it moves).
pub fn register_system_symbol(name: &str, ptr: *mut c_void) {
    let mut table = lock(&SYSTEM_SYMBOLS);
    if let Some(&old) = table.get(name)
        && old != ptr as usize
    {
        eprintln!(
            "Warning: SystemLib symbol {name} overridden to a different address {ptr:?} -> {old:#x}"
        );
    }
    table.insert(name.to_string(), ptr as usize);
}

fn system_symbol(name: &str) -> Option<*mut c_void> {
    lock(&SYSTEM_SYMBOLS).get(name).map(|&p| p as *mut c_void)
}

/// The registered system-library symbol names, sorted.
pub(super) fn system_symbol_names() -> Vec<String> {
    let mut names: Vec<String> = lock(&SYSTEM_SYMBOLS).keys().cloned().collect();
    names.sort_unstable();
    names
}

/// Whether a registered system-library symbol lies where `inside` says.
pub(super) fn system_symbol_in(inside: &dyn Fn(usize) -> bool) -> bool {
    lock(&SYSTEM_SYMBOLS).values().any(|&p| inside(p))
}
