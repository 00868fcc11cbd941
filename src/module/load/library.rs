//! Library modules: shared libraries opened with `libloading` and the
//! process-wide system library, both exposing `__tvm_ffi_<name>` functions.
//!
//! A library, once loaded, stays mapped unless [`release`]d (see
//! [`load_dso`]): no object can outlive the code it points into, and a
//! released library is unloaded only when nothing registered runs its code.

use crate::abi::*;
use crate::module::backend::context::{self, Slot};
use crate::module::format::inspect;
use crate::module::format::library_bin::{self, LIB_KIND};
use crate::module::format::symbols::*;
use crate::module::objects::module::{Module, ModuleKind};
use crate::platform::image;
use crate::platform::loader::{self, FileId, Handle};
use crate::platform::os;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{Any, Function, call::function, call::registry, model::type_table};
use core::ffi::{c_int, c_void};
use core::mem::ManuallyDrop;
use core::ops::Range;
use core::sync::atomic::{AtomicBool, Ordering};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock, Weak};

/// A loaded shared library with what the fixed lookups of a load found in
/// it. It stays open for good unless [`release`] marks it: then the last
/// module or function from it queues it for [`unload_released`].
struct Image {
    handle: ManuallyDrop<Handle>,
    /// `(name, need_write)` to the symbol's address and the bytes from it in
    /// a readable (writable) loaded segment: the answers of [`Image::locate`].
    /// A failed `dlsym` formats a message (some 2,000 instructions) and the
    /// segment search walks every loaded object, while the image never
    /// changes. Only the fixed names a load looks up are kept (the tree, the
    /// context symbols), so the list stays short.
    located: Mutex<Vec<(String, bool, Located)>>,
    /// The address ranges of its loaded segments; empty for the main
    /// program, which is never released.
    segments: Vec<Range<usize>>,
    /// Set by [`release`].
    released: AtomicBool,
    /// The functions `TVMFFIEnvModLookupFromImports` handed the library:
    /// it keeps their handles in its own variables (TVM's host code
    /// does), which live as long as the image, beyond the module whose
    /// lookup cache owned them when the same file is loaded again.
    looked_up: Mutex<Vec<ObjectRef>>,
    /// Its context slots, found once.
    slots: OnceLock<Vec<Slot>>,
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: `handle` is taken once, here, and never used again.
        let handle = unsafe { ManuallyDrop::take(&mut self.handle) };
        let looked_up = core::mem::take(&mut *lock(&self.looked_up));
        if self.released.load(Ordering::Acquire) {
            let segments = core::mem::take(&mut self.segments);
            lock(&PENDING_UNLOADS).push((handle, segments, looked_up));
        } else {
            keep_mapped(handle, looked_up);
        }
    }
}

/// Libraries that stay mapped for good: their handles are never closed,
/// and kept here so nothing they hold (a private copy, the name they were
/// opened by) is lost.
static KEPT: Mutex<Vec<(Handle, Vec<ObjectRef>)>> = Mutex::new(Vec::new());

/// Keeps `handle` open for the life of the process, with the functions its
/// variables may hold.
fn keep_mapped(handle: Handle, looked_up: Vec<ObjectRef>) {
    lock(&KEPT).push((handle, looked_up));
}

/// A symbol's address, and how many bytes from it lie in a readable (or
/// writable) loaded segment, if any does.
type Located = Option<(usize, Option<usize>)>;

impl Image {
    /// An image over an open library; only a `releasable` one records its
    /// segments (the main program's is not).
    fn new(handle: Handle, releasable: bool) -> Arc<Image> {
        let segments = if releasable {
            handle.segments()
        } else {
            Vec::new()
        };
        Arc::new(Image {
            handle: ManuallyDrop::new(handle),
            located: Mutex::new(Vec::new()),
            segments,
            released: AtomicBool::new(false),
            looked_up: Mutex::new(Vec::new()),
            slots: OnceLock::new(),
        })
    }

    /// The address of `name`, if present.
    fn get(&self, name: &str) -> Option<*mut c_void> {
        // SAFETY: we only take the address; callers cast it to the type the
        // TVM-FFI symbol convention gives that name.
        let sym = unsafe { self.handle.lib().get::<*mut c_void>(name.as_bytes()) }.ok()?;
        // SAFETY: reading the symbol's address, not calling it.
        unsafe { sym.try_as_raw_ptr() }
    }

    /// Its context slots, found in the mapped image at the first load
    /// (where the system cannot list them from memory, in the file at
    /// `path`, which it was mapped from).
    fn slots(&self, path: &Path) -> &[Slot] {
        self.slots.get_or_init(|| {
            let writable = |addr: usize| {
                image::mapped_extent(addr as *const c_void, true)
                    .is_some_and(|n| n >= size_of::<usize>())
            };
            let objects = self
                .handle
                .data_objects(context::SLOT_PREFIX.as_bytes())
                .unwrap_or_else(|| self.data_objects_from_file(path));
            objects
                .into_iter()
                .filter_map(|o| Slot::of(o, writable))
                .collect()
        })
    }

    /// The `__TVM...` data objects the file at `path` defines, at their
    /// addresses in this image.
    fn data_objects_from_file(&self, path: &Path) -> Vec<image::DataObject> {
        let Ok(data) = image::map_file(path) else {
            return Vec::new();
        };
        let names = inspect::data_objects(&data, context::SLOT_PREFIX).unwrap_or_default();
        names
            .into_iter()
            .filter_map(|(name, size)| {
                let addr = self.get(&name)? as usize;
                Some(image::DataObject { name, addr, size })
            })
            .collect()
    }

    /// [`Image::get`] and the extent of the segment holding the symbol,
    /// looked up once per image. The lookup itself runs unlocked: `dlsym`
    /// and the segment walk take the system loader's locks, which a library
    /// initialiser loading this same image already holds.
    fn locate(&self, name: &str, need_write: bool) -> Located {
        let cached = |located: &[(String, bool, Located)]| {
            located
                .iter()
                .find(|(n, w, _)| *w == need_write && n == name)
                .map(|(.., found)| *found)
        };
        if let Some(found) = cached(&lock(&self.located)) {
            return found;
        }
        let found = self
            .get(name)
            .map(|addr| (addr as usize, image::mapped_extent(addr, need_write)));
        let mut located = lock(&self.located);
        if cached(&located).is_none() {
            located.push((name.to_string(), need_write, found));
        }
        found
    }
}

/// Where a library module finds its symbols.
enum Symbols {
    /// A shared library and the path it was opened from.
    Dso(Arc<Image>, PathBuf),
    /// The system library table, with a symbol prefix tried first.
    System(String),
}

impl Symbols {
    /// The address of `name`, if present.
    fn get(&self, name: &str) -> Option<*mut c_void> {
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
    fn locate(
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

    /// The context slots a system library's registered symbols hold (their
    /// size unknown: each must reach a pointer's size within a writable
    /// loaded segment, or its registrant vouches for it).
    fn system_slots(&self) -> Vec<Slot> {
        let Symbols::System(prefix) = self else {
            return Vec::new();
        };
        let mut names: Vec<String> = lock(&SYSTEM_SYMBOLS)
            .keys()
            .map(|k| k.strip_prefix(prefix.as_str()).unwrap_or(k))
            .filter(|n| n.starts_with(context::SLOT_PREFIX))
            .map(str::to_owned)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .filter_map(|name| {
                let (addr, extent) = self.locate(&name, true, |_| size_of::<usize>())?;
                let size = size_of::<usize>();
                let object = image::DataObject {
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

    /// The path of a shared library, or which system library.
    fn describe(&self) -> String {
        match self {
            Symbols::Dso(_, path) => path.display().to_string(),
            Symbols::System(prefix) => format!("system library (prefix `{prefix}`)"),
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

/// Released images no module or function uses any more, with their
/// segments: closed by the next [`unload_released`].
static PENDING_UNLOADS: Mutex<Vec<Unload>> = Mutex::new(Vec::new());

/// A released image waiting to be closed: its handle, segments, and the
/// functions it looked up (released before it closes).
type Unload = (Handle, Vec<Range<usize>>, Vec<ObjectRef>);

/// Locks a table whose every change leaves it valid (so a poisoned lock is
/// reusable).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

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
    let pending = core::mem::take(&mut *lock(&PENDING_UNLOADS));
    for (handle, segments, looked_up) in pending {
        let inside = |addr: usize| segments.iter().any(|r| r.contains(&addr));
        let in_use = registry::runs_code_in(&inside)
            || type_table::runs_code_in(&inside, &|o| function::runs_code_in(o, &inside))
            || lock(&SYSTEM_SYMBOLS).values().any(|&p| inside(p));
        if in_use {
            keep_mapped(handle, looked_up);
        } else {
            drop(looked_up);
            drop(handle);
        }
    }
}

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
    match unsafe { (f.call)(core::ptr::null_mut(), args, num_args, result) } {
        0 => 0,
        code => library_call_failed(code),
    }
}

/// A library function's failure as the reference reports it: -1 whatever
/// nonzero code it answered (-2 included), with its error left raised; one
/// that raised nothing gets [`Error::not_raised`] naming its own code.
#[cold]
#[inline(never)]
fn library_call_failed(code: c_int) -> c_int {
    if !crate::runtime::model::error::has_raised() {
        crate::runtime::model::error::set_raised(Error::not_raised(code).into_object());
    }
    -1
}

unsafe extern "C" fn lib_function_drop(this: *mut c_void) {
    // A panicking drop of the module is contained.
    crate::platform::panic::contain_panic(|| {
        // SAFETY: `this` came from `Box::into_raw` below; dropped once.
        drop(unsafe { Box::from_raw(this.cast::<LibFunction>()) })
    });
}

impl LibraryModule {
    /// Calls a doc/metadata getter symbol (a safe call with no arguments
    /// returning a String).
    fn call_getter(&self, prefix: &str, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(addr) = self.symbols.get(&format!("{prefix}{name}")) else {
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
        let Some(call) = self.symbols.function(name) else {
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
        Ok(self.symbols.function(name).is_some())
    }
    fn function_doc(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.call_getter(DOC_PREFIX, name)
    }
    fn function_metadata(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.call_getter(METADATA_PREFIX, name)
    }
}

/// `TVMFFIEnvModRegisterSystemLibSymbol` entries.
static SYSTEM_SYMBOLS: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Default::default);
/// `ffi.SystemLib` modules, one per prefix.
static SYSTEM_LIBS: LazyLock<Mutex<HashMap<String, Module>>> = LazyLock::new(Default::default);

/// Registers a system library symbol (warns when it moves).
pub fn register_system_symbol(name: &str, ptr: *mut c_void) {
    let mut table = SYSTEM_SYMBOLS.lock().unwrap_or_else(|e| e.into_inner());
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
    SYSTEM_SYMBOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .map(|&p| p as *mut c_void)
}

/// `ffi.SystemLib(prefix)`: one module per prefix, made on first use.
/// The tree is built unlocked (an embedded tree calls registered loaders);
/// threads that build one at once keep the first.
pub fn system_lib(prefix: &str) -> Result<Module> {
    if let Some(m) = lock(&SYSTEM_LIBS).get(prefix) {
        return Ok(m.clone());
    }
    let made = library_module(Arc::new(Symbols::System(prefix.to_string())))?;
    let mut libs = lock(&SYSTEM_LIBS);
    let m = libs
        .entry(prefix.to_string())
        .or_insert(made.clone())
        .clone();
    drop(libs);
    drop(made);
    Ok(m)
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
/// [`emit::make_private_dir`](super::emit)): no one else can change it,
/// so it is opened by its path, uncopied.
pub(crate) fn load_own(path: &Path) -> Result<Module> {
    let lib = loader::dlopen(path, path)?;
    dso_module(Image::new(Handle::plain(lib), true), path)
}

/// Takes a library the loader mapped and then refused: it is closed by the
/// next [`unload_released`] unless a value its initialisers registered runs
/// code in it.
fn discard(handle: Handle) {
    let segments = handle.segments();
    lock(&PENDING_UNLOADS).push((handle, segments, Vec::new()));
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

/// Writes `value` into the `void*` variable `name` of the library, if it
/// defines one; a variable that is not writable is an error, not a crash.
fn set_pointer_symbol(symbols: &Symbols, name: &str, value: *mut c_void) -> Result<()> {
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

/// Builds the module of a library: fills its context slots (what a runtime
/// registered, then this library's defaults: `backend::context`), then
/// decodes the embedded tree if there is one.
fn library_module(symbols: Arc<Symbols>) -> Result<Module> {
    for (name, ptr) in context::registered() {
        set_pointer_symbol(&symbols, &name, ptr as *mut c_void)?;
    }
    match &*symbols {
        Symbols::Dso(image, path) => context::fill_defaults(image.slots(path)),
        Symbols::System(_) => context::fill_defaults(&symbols.system_slots()),
    }
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
        set_pointer_symbol(&symbols, LIBRARY_CTX, m.cxx_ptr())?;
        Ok(m)
    };
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
        let native_done = bootstrap_outcome(&symbols)?;
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
    let out = loader.call(&[bytes.view()])?;
    let obj = out
        .view()
        .to_object()
        .ok_or_else(|| Error::type_error(format!("{loader_name} did not return a Module")))?;
    Module::from_object(obj)
}
