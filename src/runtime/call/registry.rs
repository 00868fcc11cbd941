//! The global function table: name → function plus its doc and metadata.
//!
//! Reads take a shared lock and hash the name once; the table is filled with
//! the built-in globals the first time it is touched, by the registrars the
//! crate root composes (`crate::BUILTIN_GLOBALS`): the core does not know
//! the layers above it.
#![forbid(unsafe_code)]

use crate::runtime::call::function::Function;
use crate::runtime::call::signature::Described;
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One registered global.
struct Entry {
    func: Function,
    metadata: Box<[u8]>,
    /// A default that any registration of the name replaces, override or
    /// not (a global other runtimes register too, such as TVM's
    /// `__tvm_set_device`).
    yields: bool,
}

type Table = HashMap<Box<[u8]>, Entry>;

/// Collects the built-in globals while the table is being made.
pub struct Globals<'t>(&'t mut Table);

impl Globals<'_> {
    /// Registers a described function.
    pub fn add(&mut self, d: Described) {
        self.insert(d, false);
    }
    /// Registers a described function as a default that yields to any
    /// later registration of its name.
    pub fn yielding(&mut self, d: Described) {
        self.insert(d, true);
    }
    fn insert(&mut self, d: Described, yields: bool) {
        self.0.insert(
            d.name.as_bytes().into(),
            Entry {
                func: d.func,
                metadata: d.metadata.into_bytes().into(),
                yields,
            },
        );
    }
    /// Registers a packed (variadic) function.
    pub fn packed(&mut self, name: &'static str, func: Function) {
        self.add(Described::packed(name, func));
    }
}

static TABLE: LazyLock<RwLock<Table>> = LazyLock::new(|| {
    let mut table = Table::new();
    let mut globals = Globals(&mut table);
    for register in crate::BUILTIN_GLOBALS {
        register(&mut globals);
    }
    let builtins = table
        .iter()
        .map(|(name, e)| (name.clone(), e.func.clone()))
        .collect();
    // Only this initialiser sets it, once.
    let _ = BUILTINS.set(builtins);
    RwLock::new(table)
});

/// The built-in globals as the library registered them, immune to later
/// overrides: the C++ entry points of the reference are these functions.
static BUILTINS: OnceLock<HashMap<Box<[u8]>, Function>> = OnceLock::new();

// Every write leaves the map valid, so a poisoned lock is safe to reuse.
fn read() -> RwLockReadGuard<'static, Table> {
    TABLE.read().unwrap_or_else(|e| e.into_inner())
}
fn write() -> RwLockWriteGuard<'static, Table> {
    TABLE.write().unwrap_or_else(|e| e.into_inner())
}

/// How a global is registered: the error for a taken name differs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// `TVMFFIFunctionSetGlobal`.
    Function,
    /// `TVMFFIFunctionSetGlobalFromMethodInfo` (C++ `GlobalDef().def`),
    /// whose error hints at a duplicate registration, as the reference's.
    MethodInfo,
}

/// Registers `func` as `name`; an existing name is an error unless
/// `allow_override` or the existing entry is a yielding default.
pub fn set_global(
    name: &[u8],
    func: Function,
    metadata: &[u8],
    allow_override: bool,
    how: Registration,
) -> Result<()> {
    let mut table = write();
    if !allow_override && table.get(name).is_some_and(|e| !e.yields) {
        let hint = match how {
            Registration::Function => "",
            Registration::MethodInfo => {
                ", possible causes:\n- Two GlobalDef().def registrations for the same function \n\
                 Please remove the duplicate registration."
            }
        };
        return Err(Error::runtime(format!(
            "Global Function `{}` is already registered{hint}",
            String::from_utf8_lossy(name)
        )));
    }
    let replaced = table.insert(
        name.into(),
        Entry {
            func,
            metadata: metadata.into(),
            yields: false,
        },
    );
    GENERATION.fetch_add(1, Ordering::Release);
    // The replaced function's deleter is foreign code (it may look a
    // global up, or wait for a thread that does): it runs unlocked.
    drop(table);
    drop(replaced);
    Ok(())
}

/// The function registered as `name`, if any (a new reference).
pub fn get_global(name: &[u8]) -> Option<Function> {
    read().get(name).map(|e| e.func.clone())
}

/// The built-in global `name` as registered by the library (a new
/// reference), whatever the table holds under that name now.
pub fn builtin(name: &[u8]) -> Option<Function> {
    LazyLock::force(&TABLE);
    BUILTINS.get()?.get(name).cloned()
}

/// Removes `name`; whether it was there. The removed function is
/// released after the lock (its deleter is foreign code).
pub fn remove_global(name: &[u8]) -> bool {
    let mut table = write();
    let removed = table.remove(name);
    if removed.is_some() {
        GENERATION.fetch_add(1, Ordering::Release);
    }
    drop(table);
    removed.is_some()
}

/// Counts the changes to the table's names: bumped under the write lock by
/// every registration and removal, so it cannot change while a reader
/// holds the read lock.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The last [`names`] snapshot and the generation it was taken at.
static NAMES: Mutex<Option<(u64, Arc<[Any]>)>> = Mutex::new(None);

/// The names of all globals as `str` values, in no particular order,
/// without the defaults that yield (they stand in until a runtime such as
/// TVM registers its own; older Python packages split every listed name at
/// its last dot, and `__tvm_set_device` has none). The
/// same snapshot is handed out until a global is added or removed, so
/// listing the names again (the Python package does, at every import)
/// copies nothing: its values are shared, and releasing one frees nothing.
pub fn names() -> Arc<[Any]> {
    let current = GENERATION.load(Ordering::Acquire);
    let cached = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((taken, names)) = cached.as_ref()
        && *taken == current
    {
        return names.clone();
    }
    drop(cached);
    let (taken, names) = {
        let table = read();
        let taken = GENERATION.load(Ordering::Acquire);
        let names: Arc<[Any]> = table
            .iter()
            .filter(|(_, entry)| !entry.yields)
            .map(|(k, _)| make_text(k, TextKind::Str))
            .collect();
        (taken, names)
    };
    let mut cached = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if cached.as_ref().is_none_or(|(t, _)| *t < taken) {
        *cached = Some((taken, names.clone()));
    }
    names
}

/// The JSON metadata registered with `name`.
pub fn metadata(name: &[u8]) -> Option<Box<[u8]>> {
    read().get(name).map(|e| e.metadata.clone())
}

/// Whether a registered global would run code at an address `inside`
/// accepts (see [`crate::runtime::call::function::runs_code_in`]).
pub fn runs_code_in(inside: &dyn Fn(usize) -> bool) -> bool {
    read()
        .values()
        .any(|e| crate::runtime::call::function::runs_code_in(e.func.as_object(), inside))
}
