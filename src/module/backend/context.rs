//! Context slots: the `void*` variables (`__TVMBackendAllocWorkspace`,
//! `__TVMFFIFunctionCall`, ...) through which TVM's generated code calls
//! the runtime. A library defines them NULL; whoever loads it writes them.
//!
//! - A runtime may register what to write (`TVMFFIEnvModRegisterContextSymbol`:
//!   TVM's does when imported): written into every library loaded later
//!   that defines the name, as the reference does.
//! - Slots still NULL get this runtime's own functions: one list, the crate
//!   root's `BUILTIN_CONTEXT_SLOTS` (the C layer's entry points, which this
//!   layer cannot name), holds every slot name this runtime provides and
//!   what fills it, and the stubs for the others.
//! - In a library that wanted one of these (a TVM library), every other
//!   slot still NULL gets a stub that raises an error naming that slot and
//!   returns -1, so a call through it never jumps to address 0.
//!
//! A slot is a data object named after a C function of TVM's
//! (`__TVMBackend...`, `__TVMFFI...`, `__TVMAPI...`, `__TVMFunc...`) of
//! exactly a pointer's size in a writable segment: any other variable (a
//! flag, a table, `__TVMUserPair`) is never written. The loader finds them
//! in the image it mapped.

use crate::platform::image::DataObject;
use core::ffi::c_void;
use std::sync::{LazyLock, Mutex};

/// The prefix of every context slot's name.
pub(crate) const SLOT_PREFIX: &str = "__TVM";

/// What follows [`SLOT_PREFIX`] in a slot's name: TVM names each slot after
/// the C function it holds (`TVMBackend*`, `TVMFFI*`, `TVMAPI*`,
/// `TVMFunc*`), so `__TVMUserFlag` is no slot, whatever its size.
const SLOT_FAMILIES: [&str; 4] = ["Backend", "FFI", "API", "Func"];

/// Whether `name` is a context slot's.
fn is_slot_name(name: &str) -> bool {
    name.strip_prefix(SLOT_PREFIX)
        .is_some_and(|rest| SLOT_FAMILIES.iter().any(|f| rest.starts_with(f)))
}

/// What fills the context slots: the crate root's `BUILTIN_CONTEXT_SLOTS`.
pub(crate) struct Fillers {
    /// Each slot this runtime provides and the function written there.
    pub known: Vec<(&'static str, usize)>,
    /// Stubs for the slots nobody provides: the `i`-th raises an error
    /// naming [`unknown_slot_name`]`(i)`.
    pub stubs: Vec<usize>,
}

/// The fillers, built once from the crate root's list.
static FILLERS: LazyLock<Fillers> = LazyLock::new(crate::BUILTIN_CONTEXT_SLOTS);

/// `TVMFFIEnvModRegisterContextSymbol` entries, in registration order.
static REGISTERED: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());

/// The unknown slots seen, by the stub that answers for each.
static UNKNOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a context symbol written into every library loaded later.
pub fn register(name: &str, ptr: *mut c_void) {
    lock(&REGISTERED).push((name.to_string(), ptr as usize));
}

/// The registered context symbols, in registration order
/// (`Module::VisitContextSymbols`): a copy, so no lock is held while the
/// caller writes them.
pub fn registered() -> Vec<(String, usize)> {
    lock(&REGISTERED).clone()
}

/// The name of the slot the `index`-th unknown-slot stub answers for.
pub(crate) fn unknown_slot_name(index: usize) -> String {
    let stubs = FILLERS.stubs.len();
    lock(&UNKNOWN).get(index).cloned().unwrap_or_else(|| {
        format!("a context symbol beyond the first {stubs} unknown ones of this process")
    })
}

/// The names of the slots this runtime fills (where an image's data objects
/// cannot be listed, the slots are looked up by these).
pub(crate) fn known_names() -> impl Iterator<Item = &'static str> {
    FILLERS.known.iter().map(|&(name, _)| name)
}

/// A context slot of a loaded library.
pub(crate) struct Slot {
    name: String,
    addr: usize,
}

impl Slot {
    /// The slot among an image's data objects, if `object` is one: named
    /// `__TVM...`, exactly pointer-sized, and `writable` says its address
    /// lies in a writable segment.
    pub(crate) fn of(object: DataObject, writable: impl Fn(usize) -> bool) -> Option<Slot> {
        (is_slot_name(&object.name) && object.size == size_of::<usize>() && writable(object.addr))
            .then_some(Slot {
                name: object.name,
                addr: object.addr,
            })
    }

    /// Writes `value` if the slot is still NULL; whether it wrote.
    fn fill(&self, value: usize) -> bool {
        let slot = self.addr as *mut *mut c_void;
        // SAFETY: `Slot::of` took a pointer-sized variable of a loaded
        // image in a writable segment; images stay mapped while a module of
        // theirs is being built.
        unsafe {
            if slot.read_unaligned().is_null() {
                slot.write_unaligned(value as *mut c_void);
                return true;
            }
        }
        false
    }
}

/// Fills the slots still NULL (see the module docs): the ones this runtime
/// provides, then, if one of those was filled, every other with a stub.
pub(crate) fn fill_defaults(slots: &[Slot]) {
    if slots.is_empty() {
        return;
    }
    let fillers = &*FILLERS;
    let mut filled = false;
    let mut unknown = Vec::new();
    for slot in slots {
        match fillers.known.iter().find(|(n, _)| *n == slot.name) {
            Some(&(_, value)) => filled |= slot.fill(value),
            None => unknown.push(slot),
        }
    }
    if !filled || fillers.stubs.is_empty() {
        return;
    }
    for slot in unknown {
        let index = {
            let mut names = lock(&UNKNOWN);
            match names.iter().position(|n| *n == slot.name) {
                Some(i) => i,
                None if names.len() < fillers.stubs.len() - 1 => {
                    names.push(slot.name.clone());
                    names.len() - 1
                }
                None => fillers.stubs.len() - 1,
            }
        };
        slot.fill(fillers.stubs[index]);
    }
}
