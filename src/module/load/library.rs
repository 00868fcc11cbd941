//! Library modules: shared libraries opened with `libloading` (and the
//! main program), exposing `__tvm_ffi_<name>` functions. A load reads top
//! down: [`load_dso`] opens the file (or finds the image opened before),
//! [`library_module`] fills the context slots (`context`) and decodes the
//! embedded tree (`tree`); functions come from `function`, symbols from
//! `symbols`, the mapped image and its unload queue from `image`.
//!
//! A library, once loaded, stays mapped unless [`release`]d: no object can
//! outlive the code it points into, and a released library is unloaded
//! only when nothing registered runs its code.

use super::image::{Image, discard, keep_mapped, lock, take_pending};
use super::symbols::{Symbols, system_symbol_in};
use super::{context, function, tree};
use crate::module::format::symbols::*;
use crate::module::objects::module::{Module, ModuleKind};
use crate::platform::loader::{self, FileId, Handle};
use crate::platform::os;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::{Function, call::function as functions, call::registry, model::type_table};
use core::ffi::c_void;
use core::sync::atomic::Ordering;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, Weak};

/// A library as a module kind (`library`).
struct LibraryModule {
    symbols: Arc<Symbols>,
    /// The module object's address, once made: its key in [`LIB_MODULES`].
    handle: Arc<OnceLock<usize>>,
}

impl Drop for LibraryModule {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.get() {
            lock(&LIB_MODULES).remove(handle);
        }
    }
}

/// The image behind each live library module over a shared library, by
/// the module object's address: what [`release`] marks.
static LIB_MODULES: LazyLock<Mutex<HashMap<usize, Weak<Image>>>> = LazyLock::new(Default::default);

/// Says the library `m` was loaded from is no longer needed
/// (`ffi.ModuleGlobalsRemove`): once no module or function from it is left,
/// the next load or release unloads it, unless a registered global, type,
/// field or system-library symbol still runs its code (then it stays mapped
/// for good). Objects the caller still holds that the library made (a
/// closure it returned, an object whose deleter it holds) are the caller's
/// to have released first, as with the reference. Other modules (the
/// system library, C++ modules) are unaffected.
pub fn release(m: &Module) {
    let image = lock(&LIB_MODULES)
        .get(&(m.handle() as usize))
        .and_then(Weak::upgrade);
    if let Some(image) = image.filter(|i| !i.segments.is_empty()) {
        image.released.store(true, Ordering::Release);
        lock(&OPENED).retain(|_, (_, kept)| !Arc::ptr_eq(kept, &image));
    }
    unload_released();
}

/// Keeps `func`, which `TVMFFIEnvModLookupFromImports` found for the
/// library of module `m`, as long as that library stays mapped (see
/// `Image::looked_up`); nothing for other modules.
pub fn keep_looked_up(m: &Module, func: &ObjectRef) {
    let image = lock(&LIB_MODULES)
        .get(&(m.handle() as usize))
        .and_then(Weak::upgrade);
    if let Some(image) = image {
        let mut kept = lock(&image.looked_up);
        if !kept.iter().any(|k| k == func) {
            kept.push(func.clone());
        }
    }
}

/// Closes the released images queued by their last user, each unless a
/// registered value still runs code in it.
fn unload_released() {
    for (handle, segments, looked_up) in take_pending() {
        let inside = |addr: usize| segments.iter().any(|r| r.contains(&addr));
        let in_use = registry::runs_code_in(&inside)
            || type_table::runs_code_in(&inside, &|o| functions::runs_code_in(o, &inside))
            || system_symbol_in(&inside);
        if in_use {
            keep_mapped(handle, looked_up);
        } else {
            drop(looked_up);
            drop(handle);
        }
    }
}

impl LibraryModule {
    /// Calls a doc/metadata getter symbol (a safe call with no arguments
    /// returning a String).
    fn call_getter(&self, prefix: &str, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(addr) = self.symbols.get(&format!("{prefix}{name}")) else {
            return Ok(None);
        };
        // SAFETY: by convention the getter is a TVMFFISafeCallType.
        let getter = unsafe { core::mem::transmute::<*mut c_void, super::symbols::SafeCall>(addr) };
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
        let Some(call) = self.symbols.function(name) else {
            return Ok(None);
        };
        Ok(Some(function::library_function(call, module)))
    }
    fn implements_function(&self, _module: &Module, name: &str) -> Result<bool> {
        Ok(self.symbols.function(name).is_some())
    }
    fn function_doc(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.call_getter(DOC_PREFIX, name)
    }
    fn function_metadata(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.call_getter(METADATA_PREFIX, name)
    }
}

/// A new library module over the main program and the libraries it loaded
/// globally (`dlopen(NULL)`): the host of an artifact set without native
/// code.
pub fn main_program() -> Result<Module> {
    dso_module(
        Image::new(Handle::this_program(), false),
        Path::new("<main program>"),
    )
}

/// A library opened from a path: the file it was opened from and its image.
type Opened = (FileId, Arc<Image>);

/// Libraries opened from a path, by the path's bytes.
static OPENED: LazyLock<Mutex<HashMap<Vec<u8>, Opened>>> = LazyLock::new(Default::default);

/// Opens a shared library (`RTLD_LAZY | RTLD_LOCAL`) as a module tree.
///
/// A bare name (no `/`) is left to the loader's search path. A path must
/// name a regular file whose ELF headers and loadable segments lie within
/// it; the system loader maps it from its real path, or from a private copy
/// where the path cannot be trusted or the file was rewritten in place
/// since it was mapped ([`loader`] says what each route
/// guarantees).
///
/// A library stays mapped for the life of the process unless [`release`]d:
/// functions and objects it made (a closure it returned, an error it
/// raised, a global it registered) carry code pointers into it and may
/// outlive every module, and nothing tells us when the last of them goes.
/// Loading a path again gives the same image while the file is unchanged;
/// on Unix a changed one is loaded as a new image from exactly the bytes
/// checked (a reload, which the reference lacks), and the old one stays.
pub fn load_dso(path: &Path) -> Result<Module> {
    unload_released();
    let key = os::path_bytes(path);
    let key = &*key;
    if !os::has_separator(key) {
        let lib = loader::dlopen(path, path)?;
        return dso_module(Image::new(Handle::plain(lib), true), path);
    }
    // The image opened from this path, if the file is unchanged: one `stat`.
    if let Some(image) = opened_image(key, || FileId::at(path)) {
        return dso_module(image, path);
    }
    // No lock of ours is held while the system loader maps the file: its
    // initialisers may load modules themselves, on this thread or another
    // one that waits for the loader's own lock. Threads that map the same
    // new file at once keep the image recorded first.
    let reload = lock(&OPENED).contains_key(key);
    let (handle, id) = loader::open(path, reload, discard)?;
    let mapped = Image::new(handle, true);
    let mut opened = lock(&OPENED);
    let (image, unused) = match opened.get(key) {
        Some((was, first)) if *was == id => {
            // Another thread's image of this file came first: this handle
            // is closed by the next unload unless its code is in use.
            mapped.released.store(true, Ordering::Release);
            (first.clone(), Some(mapped))
        }
        _ => {
            let replaced = opened.insert(key.to_vec(), (id, mapped.clone()));
            (mapped, replaced.map(|(_, old)| old))
        }
    };
    drop(opened);
    drop(unused);
    dso_module(image, path)
}

/// Loads a library this library just built in a private directory (see
/// [`trust::make_private_dir`](crate::platform::trust)): no one else can change it,
/// so it is opened by its path, uncopied.
pub(crate) fn load_own(path: &Path) -> Result<Module> {
    let lib = loader::dlopen(path, path)?;
    dso_module(Image::new(Handle::plain(lib), true), path)
}

/// The module tree of a shared library's image.
fn dso_module(image: Arc<Image>, path: &Path) -> Result<Module> {
    library_module(Arc::new(Symbols::Dso(image, path.to_path_buf())))
}

/// The image opened before from `path` (its bytes), if the file is still
/// the one it was opened from (`now` identifies it today).
fn opened_image(path: &[u8], now: impl FnOnce() -> Option<FileId>) -> Option<Arc<Image>> {
    let (was, image) = lock(&OPENED).get(path)?.clone();
    (now()? == was).then_some(image)
}

/// Builds the module of a library: fills its context slots, then decodes
/// the embedded tree if there is one.
pub(super) fn library_module(symbols: Arc<Symbols>) -> Result<Module> {
    context::fill(&symbols)?;
    // As in the reference, `__tvm_ffi__library_ctx` receives the
    // `ModuleObj*` (the C++ address), for TVMFFIEnvModLookupFromImports.
    let new_lib_module = || -> Result<Module> {
        let handle = Arc::new(OnceLock::new());
        let m = Module::new(LibraryModule {
            symbols: symbols.clone(),
            handle: handle.clone(),
        })?;
        if let Symbols::Dso(image, _) = &*symbols {
            let key = m.handle() as usize;
            lock(&LIB_MODULES).insert(key, Arc::downgrade(image));
            let _ = handle.set(key);
        }
        context::set_pointer_symbol(&symbols, LIBRARY_CTX, m.cxx_ptr())?;
        Ok(m)
    };
    tree::module_tree(&symbols, new_lib_module)
}
