//! The module tree a library embeds (`__tvm_ffi__library_bin`), decoded
//! at load: each entry loaded by its kind's registered loader, `_lib`
//! entries as the library itself, the imports filled, an exported artifact
//! set's record attached to the root.

use super::symbols::Symbols;
use crate::module::format::library_bin::{self, LIB_KIND};
use crate::module::format::symbols::{CONSTANTS_STATUS, LIBRARY_BIN, LOAD_FROM_BYTES_PREFIX};
use crate::module::objects::module::Module;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{Any, call::registry};
use core::ffi::c_void;

/// The root of the tree `symbols` embeds, its `_lib` entries made by
/// `new_lib_module`; the library module itself when it embeds none.
#[inline(always)] // Its one caller's, the load (see `context::fill`).
pub(super) fn module_tree(
    symbols: &Symbols,
    new_lib_module: impl Fn() -> Result<Module>,
) -> Result<Module> {
    // The blob is bounded by the loaded segment that holds it, whatever
    // size its symbol declares (2^40, or 0 as hand-written assembly emits).
    let fallback = |bin_addr: *mut c_void| {
        // SAFETY: a system-library blob outside any loaded segment was
        // registered by static code, which vouches for its declared size.
        let declared = unsafe { bin_addr.cast::<u64>().read_unaligned() };
        usize::try_from(declared.saturating_add(8)).unwrap_or(usize::MAX)
    };
    let Some((bin_addr, extent)) = symbols.locate(LIBRARY_BIN, false, fallback) else {
        return new_lib_module();
    };
    let bound = extent.ok_or_else(|| {
        Error::value(format!(
            "{LIBRARY_BIN} of {} is not in a readable loaded segment",
            symbols.describe()
        ))
    })?;
    // SAFETY: `bound` bytes from the symbol are mapped and readable, and
    // stay so: libraries are never unmapped.
    let blob: &'static [u8] = unsafe { core::slice::from_raw_parts(bin_addr.cast::<u8>(), bound) };
    let tree = library_bin::parse(blob)?;
    // Modules by index; an artifact set record (an exported set) is no
    // module: it is attached to the root once the tree is built.
    let mut modules = Vec::with_capacity(tree.modules.len());
    let mut records = Vec::new();
    for entry in &tree.modules {
        modules.push(if entry.kind == LIB_KIND {
            Some(new_lib_module()?)
        } else if entry.kind == library_bin::SET_RECORD_KIND.as_bytes() {
            records.push(entry.payload.unwrap_or(&[]));
            None
        } else {
            Some(load_from_bytes(entry.kind, entry.payload.unwrap_or(&[]))?)
        });
    }
    // Each parent's imports in one step, as the reference fills them; the
    // blob's tree has no cycle (the parser checks), but loaders may answer
    // with modules they share, so the finished graph is checked once.
    let mut parents = Vec::new();
    for (i, children) in tree.imports.iter().enumerate() {
        let Some(parent) = &modules[i] else { continue };
        let kids: Vec<&Module> = children
            .iter()
            .filter_map(|&c| modules[c].as_ref())
            .collect();
        if !kids.is_empty() {
            parent.append_imports(&kids)?;
            parents.push(parent);
        }
    }
    if Module::import_cycle(&parents) {
        // Undone, so the modules do not keep each other alive.
        for parent in parents {
            parent.clear_imports_base();
        }
        return Err(Error::runtime("Cyclic dependency detected during import"));
    }
    let root = modules.swap_remove(0).ok_or_else(|| {
        Error::value(format!(
            "the root of the module tree of {} is an artifact set record",
            symbols.describe()
        ))
    })?;
    if !records.is_empty() {
        let native_done = bootstrap_outcome(symbols)?;
        for record in records {
            // The artifact layer attaches it: the crate root names who.
            crate::BUILTIN_SET_RECORD_LOADER(record, &root, native_done)?;
        }
    }
    Ok(root)
}

/// Whether an exported library's constants bootstrap already handed the
/// native code its constants at `dlopen` (see `bootstrap`); its failure is
/// this load's error.
fn bootstrap_outcome(symbols: &Symbols) -> Result<bool> {
    let Some((addr, extent)) = symbols.locate(CONSTANTS_STATUS, false, |_| 0) else {
        return Ok(false);
    };
    if extent.is_none_or(|n| n < size_of::<i32>()) {
        return Err(Error::value(format!(
            "{} of {} is not a readable int",
            CONSTANTS_STATUS,
            symbols.describe()
        )));
    }
    // SAFETY: a mapped, readable int of the library.
    match unsafe { addr.cast::<i32>().read_unaligned() } {
        1 => Ok(true),
        -2 => Err(Error::value(format!(
            "{} has constants for its native code but no `__tvm_ffi___init_constants` function",
            symbols.describe()
        ))),
        -1 => Err(crate::runtime::model::error::take_raised().map_or_else(
            || {
                Error::runtime(format!(
                    "the constants bootstrap of {} failed",
                    symbols.describe()
                ))
            },
            Error::object,
        )),
        status => Err(Error::runtime(format!(
            "the constants bootstrap of {} did not run (status {status})",
            symbols.describe()
        ))),
    }
}

/// Loads one serialized module through `ffi.Module.load_from_bytes.<kind>`.
pub(crate) fn load_from_bytes(kind: &[u8], payload: &[u8]) -> Result<Module> {
    let kind = String::from_utf8_lossy(kind);
    let loader_name = format!("{LOAD_FROM_BYTES_PREFIX}{kind}");
    let loader = registry::get_global(loader_name.as_bytes()).ok_or_else(|| {
        Error::runtime(format!(
            "Library binary was created using {{{kind}}} but a loader of that name is not registered. \
             Make sure to have runtime that registers {loader_name}"
        ))
    })?;
    let bytes: Any = make_text(payload, TextKind::Bytes);
    let out = loader.call(&[bytes.view()])?;
    let obj = out
        .view()
        .to_object()
        .ok_or_else(|| Error::type_error(format!("{loader_name} did not return a Module")))?;
    Module::from_object(obj)
}
