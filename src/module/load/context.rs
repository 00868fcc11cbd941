//! The context slots of a library being loaded: its `__TVM...` pointer
//! variables, filled with what a runtime registered, then with this
//! library's defaults (`backend::context` says what fills each). The slots
//! are found in the image already mapped, never by reading its file again.

use super::image::Image;
use super::symbols::{Symbols, system_symbol_names};
use crate::module::backend::context::{self, Slot};
use crate::platform::image::{self, DataObject};
use crate::runtime::model::error::{Error, Result};
use core::ffi::c_void;

/// Fills the context slots of the library `symbols` names. (Inlined into
/// its one caller, the load, which it was part of: a call costs the warm
/// load some 10 instructions.)
#[inline(always)]
pub(super) fn fill(symbols: &Symbols) -> Result<()> {
    for (name, ptr) in context::registered() {
        set_pointer_symbol(symbols, &name, ptr as *mut c_void)?;
    }
    match symbols {
        Symbols::Dso(image, _) => context::fill_defaults(slots_of(image)),
        Symbols::System(prefix) => context::fill_defaults(&system_slots(symbols, prefix)),
    }
    Ok(())
}

/// An image's context slots, found once: every `__TVM...` data object of
/// its dynamic symbol table where the system lists it from memory (Linux),
/// else the slots this runtime fills, by name; each a pointer-sized
/// variable in a writable segment.
fn slots_of(image: &Image) -> &[Slot] {
    image.slots.get_or_init(|| {
        let writable = |addr: usize| {
            image::mapped_extent(addr as *const c_void, true)
                .is_some_and(|n| n >= size_of::<usize>())
        };
        let objects = image
            .handle
            .data_objects(context::SLOT_PREFIX.as_bytes())
            .unwrap_or_else(|| {
                context::known_names()
                    .filter_map(|name| {
                        Some(DataObject {
                            name: name.to_owned(),
                            addr: image.get(name)? as usize,
                            size: size_of::<usize>(),
                        })
                    })
                    .collect()
            });
        objects
            .into_iter()
            .filter_map(|o| Slot::of(o, writable))
            .collect()
    })
}

/// The context slots a system library's registered symbols hold (their
/// size unknown: each must reach a pointer's size within a writable
/// loaded segment, or its registrant vouches for it).
fn system_slots(symbols: &Symbols, prefix: &str) -> Vec<Slot> {
    let mut names: Vec<String> = system_symbol_names()
        .into_iter()
        .map(|k| k.strip_prefix(prefix).map(str::to_owned).unwrap_or(k))
        .filter(|n| n.starts_with(context::SLOT_PREFIX))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let (addr, extent) = symbols.locate(&name, true, |_| size_of::<usize>())?;
            let size = size_of::<usize>();
            let object = DataObject {
                name,
                addr: addr as usize,
                size,
            };
            extent
                .filter(|&n| n >= size)
                .and_then(|_| Slot::of(object, |_| true))
        })
        .collect()
}

/// Writes `value` into the `void*` variable `name` of the library, if it
/// defines one; a variable that is not writable is an error, not a crash.
pub(super) fn set_pointer_symbol(symbols: &Symbols, name: &str, value: *mut c_void) -> Result<()> {
    let Some((addr, extent)) = symbols.locate(name, true, |_| size_of::<usize>()) else {
        return Ok(());
    };
    if extent.is_none_or(|n| n < size_of::<usize>()) {
        return Err(Error::value(format!(
            "{name} of {} is not a writable pointer variable",
            symbols.describe()
        )));
    }
    // SAFETY: a writable, mapped pointer-sized variable of the library.
    unsafe { addr.cast::<*mut c_void>().write_unaligned(value) };
    Ok(())
}
