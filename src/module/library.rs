//! Library modules: shared libraries opened with `libloading` and the
//! process-wide system library, both exposing `__tvm_ffi_<name>` functions.
//!
//! A library stays loaded while its module, or any function taken from it,
//! is alive (functions hold the module, the module holds the library), and
//! is closed when the last of them goes.

use super::library_bin::{self, LIB_KIND};
use super::object::{Module, ModuleKind};
use super::symbols::*;
use crate::abi::*;
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::string::{TextKind, make_text};
use crate::core::{Any, Function, registry};
use core::ffi::{c_int, c_void};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

/// Where a library module finds its symbols.
enum Symbols {
    /// A shared library and the path it was opened from.
    Dso(libloading::Library, String),
    /// The system library table, with a symbol prefix tried first.
    System(String),
}

impl Symbols {
    /// The address of `name`, if present.
    fn get(&self, name: &str) -> Option<*mut c_void> {
        match self {
            Symbols::Dso(lib, _) => {
                // SAFETY: we only take the address; callers cast it to the
                // type the TVM-FFI symbol convention gives that name.
                let sym = unsafe { lib.get::<*mut c_void>(name.as_bytes()) }.ok()?;
                // SAFETY: reading the symbol's address, not calling it.
                Some(unsafe { sym.try_as_raw_ptr() }?)
            }
            Symbols::System(prefix) => {
                system_symbol(&format!("{prefix}{name}")).or_else(|| system_symbol(name))
            }
        }
    }

    /// The function symbol of `name` (`__tvm_ffi_<prefix><name>` first for
    /// the system library).
    fn function(&self, name: &str) -> Option<SafeCall> {
        let addr = match self {
            Symbols::Dso(..) => self.get(&format!("{FUNCTION_PREFIX}{name}")),
            Symbols::System(prefix) => system_symbol(&format!("{FUNCTION_PREFIX}{prefix}{name}"))
                .or_else(|| system_symbol(&format!("{FUNCTION_PREFIX}{name}"))),
        }?;
        // SAFETY: by convention `__tvm_ffi_<name>` is a TVMFFISafeCallType.
        Some(unsafe { core::mem::transmute::<*mut c_void, SafeCall>(addr) })
    }
}

type SafeCall = unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, i32, *mut TVMFFIAny) -> c_int;

/// A library as a module kind (`library`).
struct LibraryModule(Arc<Symbols>);

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
    unsafe { (f.call)(core::ptr::null_mut(), args, num_args, result) }
}

unsafe extern "C" fn lib_function_drop(this: *mut c_void) {
    // SAFETY: `this` came from `Box::into_raw` below; dropped once.
    drop(unsafe { Box::from_raw(this.cast::<LibFunction>()) });
}

impl LibraryModule {
    /// Calls a doc/metadata getter symbol (a safe call with no arguments
    /// returning a String).
    fn call_getter(&self, prefix: &str, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(addr) = self.0.get(&format!("{prefix}{name}")) else {
            return Ok(None);
        };
        // SAFETY: by convention the getter is a TVMFFISafeCallType.
        let getter = unsafe { core::mem::transmute::<*mut c_void, SafeCall>(addr) };
        let f = Function::from_extern_c(core::ptr::null_mut(), getter, None);
        // A direct function receives itself; getters ignore their handle.
        let out = f.call(&[])?;
        let text = out
            .view()
            .as_str_bytes()
            .ok_or_else(|| Error::type_error(format!("{prefix}{name} did not return a str")))?;
        Ok(Some(text.to_vec()))
    }
}

impl ModuleKind for LibraryModule {
    fn kind(&self) -> &str {
        LIBRARY_KIND
    }
    fn property_mask(&self) -> i64 {
        property::BINARY_SERIALIZABLE | property::RUNNABLE
    }
    fn get_function(&self, module: &Module, name: &str) -> Result<Option<Function>> {
        let Some(call) = self.0.function(name) else {
            return Ok(None);
        };
        let ctx = Box::into_raw(Box::new(LibFunction {
            call,
            _module: module.clone(),
        }));
        Ok(Some(Function::from_extern_c(
            ctx.cast(),
            lib_function_call,
            Some(lib_function_drop),
        )))
    }
    fn implements_function(&self, _module: &Module, name: &str) -> Result<bool> {
        Ok(self.0.function(name).is_some())
    }
    fn function_doc(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.call_getter(DOC_PREFIX, name)
    }
    fn function_metadata(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.call_getter(METADATA_PREFIX, name)
    }
    fn inspect_source(&self, _format: &str) -> String {
        match &*self.0 {
            Symbols::Dso(_, path) => path.clone(),
            Symbols::System(prefix) => format!("system library (prefix `{prefix}`)"),
        }
    }
}

/// `TVMFFIEnvModRegisterContextSymbol` entries.
static CONTEXT_SYMBOLS: LazyLock<Mutex<Vec<(String, usize)>>> = LazyLock::new(Default::default);
/// `TVMFFIEnvModRegisterSystemLibSymbol` entries.
static SYSTEM_SYMBOLS: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Default::default);
/// `ffi.SystemLib` modules, one per prefix.
static SYSTEM_LIBS: LazyLock<Mutex<HashMap<String, Module>>> = LazyLock::new(Default::default);

/// Registers a context symbol written into every library loaded later.
pub fn register_context_symbol(name: &str, ptr: *mut c_void) {
    CONTEXT_SYMBOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((name.to_string(), ptr as usize));
}

/// Registers a system library symbol (warns when it moves).
pub fn register_system_symbol(name: &str, ptr: *mut c_void) {
    let mut table = SYSTEM_SYMBOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&old) = table.get(name) {
        if old != ptr as usize {
            eprintln!(
                "Warning: SystemLib symbol {name} overridden to a different address {ptr:?} -> {old:#x}"
            );
        }
    }
    table.insert(name.to_string(), ptr as usize);
}

/// Calls `visit(name, value)` for each registered context symbol, in
/// registration order (`Module::VisitContextSymbols`).
pub fn visit_context_symbols(mut visit: impl FnMut(&str, *mut c_void) -> Result<()>) -> Result<()> {
    let symbols = CONTEXT_SYMBOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for (name, ptr) in &symbols {
        visit(name, *ptr as *mut c_void)?;
    }
    Ok(())
}

fn system_symbol(name: &str) -> Option<*mut c_void> {
    SYSTEM_SYMBOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .map(|&p| p as *mut c_void)
}

/// `ffi.SystemLib(prefix)`: one module per prefix, made on first use.
pub fn system_lib(prefix: &str) -> Result<Module> {
    let mut libs = SYSTEM_LIBS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = libs.get(prefix) {
        return Ok(m.clone());
    }
    let m = library_module(Arc::new(Symbols::System(prefix.to_string())), None)?;
    libs.insert(prefix.to_string(), m.clone());
    Ok(m)
}

/// Opens a shared library (`RTLD_LAZY | RTLD_LOCAL`) as a module tree.
pub fn load_dso(path: &str) -> Result<Module> {
    // SAFETY: loading a library runs its initialisers; that is what the
    // caller asks for.
    let lib = unsafe {
        libloading::os::unix::Library::open(
            Some(path),
            libloading::os::unix::RTLD_LAZY | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| {
        // The reference reports this through an internal check, with what
        // dlerror() said.
        let reason = std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
        Error::new(
            ErrorKind::InternalError,
            format!(
                "Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library {path} {reason}"
            ),
        )
    })?;
    let symbols = Arc::new(Symbols::Dso(lib.into(), path.to_string()));
    // Only a library that embeds a tree needs its file read, to bound the
    // blob by the symbol's size.
    let blob_size = match symbols.get(LIBRARY_BIN) {
        Some(_) => super::inspect::symbol_size(path, LIBRARY_BIN)?,
        None => None,
    };
    library_module(symbols, blob_size)
}

/// Builds the module of a library: fills context symbols, then decodes the
/// embedded tree if there is one (its size bounded by `blob_size`).
fn library_module(symbols: Arc<Symbols>, blob_size: Option<u64>) -> Result<Module> {
    for (name, ptr) in CONTEXT_SYMBOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
    {
        if let Some(addr) = symbols.get(name) {
            // SAFETY: a context symbol is a `void*` variable of the library.
            unsafe { *addr.cast::<usize>() = *ptr };
        }
    }
    let ctx_addr = symbols.get(LIBRARY_CTX);
    let set_ctx = |m: &Module| {
        if let Some(addr) = ctx_addr {
            // SAFETY: `__tvm_ffi__library_ctx` is a `void*` variable; as in
            // the reference it receives the `ModuleObj*` (the C++ address),
            // for TVMFFIEnvModLookupFromImports.
            unsafe { *addr.cast::<*mut c_void>() = m.cxx_ptr() };
        }
    };
    let Some(bin_addr) = symbols.get(LIBRARY_BIN) else {
        let m = Module::new(LibraryModule(symbols))?;
        set_ctx(&m);
        return Ok(m);
    };
    // SAFETY: the blob starts with its u64 size; the whole blob is bounded
    // by the symbol's size in the file (or, for the system library, by the
    // size it declares, as registered by trusted static code).
    let blob = unsafe {
        let declared = u64::from_le_bytes(*bin_addr.cast::<[u8; 8]>());
        let total = match blob_size {
            Some(size) => declared.saturating_add(8).min(size),
            None => declared.saturating_add(8),
        };
        core::slice::from_raw_parts(
            bin_addr.cast::<u8>(),
            usize::try_from(total).map_err(|_| Error::value("library_bin too large"))?,
        )
    };
    let tree = library_bin::parse(blob).map_err(|e| Error::value(e.to_string()))?;
    let mut modules = Vec::with_capacity(tree.modules.len());
    for entry in &tree.modules {
        if entry.kind == LIB_KIND {
            let m = Module::new(LibraryModule(symbols.clone()))?;
            set_ctx(&m);
            modules.push(m);
        } else {
            modules.push(load_from_bytes(entry.kind, entry.payload.unwrap_or(&[]))?);
        }
    }
    for (i, children) in tree.imports.iter().enumerate() {
        for &c in children {
            modules[i].import(&modules[c])?;
        }
    }
    Ok(modules.swap_remove(0))
}

/// Loads one serialized module through `ffi.Module.load_from_bytes.<kind>`.
pub fn load_from_bytes(kind: &[u8], payload: &[u8]) -> Result<Module> {
    let kind = String::from_utf8_lossy(kind);
    let loader_name = format!("{LOAD_FROM_BYTES_PREFIX}{kind}");
    let loader = registry::get_global(loader_name.as_bytes()).ok_or_else(|| {
        Error::runtime(format!(
            "Library binary was created using {{{kind}}} but a loader of that name is not registered. \
             Make sure to have runtime that registers {loader_name}"
        ))
    })?;
    let bytes: Any = make_text(payload, TextKind::Bytes);
    let out = loader.call(&[*bytes.view().raw()])?;
    let obj = out
        .view()
        .to_object()
        .ok_or_else(|| Error::type_error(format!("{loader_name} did not return a Module")))?;
    Module::from_object(obj)
}
