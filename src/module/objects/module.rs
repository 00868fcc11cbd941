//! Module objects. Every module is a C++ `ModuleObj` (a vtable pointer 8
//! bytes before the object handle, then the header, `imports_` and
//! `import_lookup_cache_`), whether this library made it for a Rust
//! [`ModuleKind`] or C++ code elsewhere made it for a subclass of its own;
//! the virtual methods (and making a module of a Rust kind) are reached
//! through `cxx`. The non-virtual parts of
//! `ModuleObj` (lookups through the imports, the base import methods, the
//! lookup cache) are implemented here.

use crate::abi::*;
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{Cell, ObjectRef};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{Function, value::map, value::seq};
use core::ffi::c_void;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use std::sync::Mutex;

/// What a module kind implements. Only `kind` and `get_function` are
/// required; the defaults answer "not supported" like the reference.
pub trait ModuleKind: Send + Sync + 'static {
    /// The kind name (`library`, `cuda`, ...).
    fn kind(&self) -> &str;
    /// `property::*` bits.
    fn property_mask(&self) -> i64 {
        0
    }
    /// The function `name` of this module (not its imports), if any.
    /// `module` is the module object itself, for functions to keep alive.
    fn get_function(&self, module: &Module, name: &str) -> Result<Option<Function>>;
    /// Whether `get_function(name)` would find something.
    fn implements_function(&self, module: &Module, name: &str) -> Result<bool> {
        Ok(self.get_function(module, name)?.is_some())
    }
    /// The doc string of function `name`.
    fn function_doc(&self, _name: &str) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }
    /// The JSON metadata of function `name`.
    fn function_metadata(&self, _name: &str) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }
    /// The module serialized (for `ffi.Module.load_from_bytes.<kind>`).
    fn save_to_bytes(&self) -> Result<Vec<u8>> {
        Err(Error::runtime(format!(
            "Module[{}] does not support SaveToBytes",
            self.kind()
        )))
    }
    /// The source in `format`, empty if none.
    fn inspect_source(&self, _format: &str) -> String {
        String::new()
    }
    /// The formats `write_to_file` accepts.
    fn write_formats(&self) -> Vec<String> {
        Vec::new()
    }
    /// Writes the module to `path` in `format`.
    fn write_to_file(&self, _path: &str, _format: &str) -> Result<()> {
        Err(Error::runtime(format!(
            "Module[{}] does not support WriteToFile",
            self.kind()
        )))
    }
}

/// The fields of a C++ `ModuleObj` after the object header (the vtable
/// pointer lies 8 bytes before the handle): `imports_` (an `Array<Any>`) and
/// `import_lookup_cache_` (a `Map<String, Function>`), NULL or owned.
#[repr(C)]
struct ModuleCell {
    imports: *mut TVMFFIObject,
    import_lookup_cache: *mut TVMFFIObject,
}

// SAFETY: objects of type index `ffi.Module` are C++ `ModuleObj`s by the ABI
// (the type has no creator), with these two fields after the header. The
// reference declares `ModuleObj` final: C++ subclasses keep its type index,
// and the check is the exact index, as the reference's. They are replaced
// in place, so the cell is not frozen.
unsafe impl Cell for ModuleCell {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIModule
    }
}

/// The error for an object that is not a module.
fn not_a_module(type_index: i32) -> Error {
    Error::type_error(format!(
        "expected an ffi.Module, got {}",
        crate::runtime::model::type_table::type_key_of(type_index)
    ))
}

/// Serialises this library's reads and replacements of `imports_` fields
/// (C++ code reads them directly, unsynchronised, as with the reference).
static IMPORTS_LOCK: Mutex<()> = Mutex::new(());

/// A strong reference to a module object: any C++ `ModuleObj`, made by
/// this library (for a [`ModuleKind`]) or by C++ code elsewhere. Every
/// operation goes through the object's vtable (`cxx`).
#[derive(Clone, Debug)]
pub struct Module(ObjectRef);

impl Module {
    /// Views an object as a module. Objects of type index `ffi.Module` are
    /// C++ `ModuleObj`s by the ABI (the type is final and has no creator).
    pub fn from_object(obj: ObjectRef) -> Result<Module> {
        match obj.type_index() {
            kTVMFFIModule => Ok(Module(obj)),
            other => Err(not_a_module(other)),
        }
    }

    /// A module borrowed from a handle the caller keeps alive: no
    /// reference count change (dropping the result releases nothing).
    ///
    /// # Safety
    /// `handle` is a live object for as long as the result is used.
    pub unsafe fn borrowed(handle: NonNull<TVMFFIObject>) -> Result<ManuallyDrop<Module>> {
        // SAFETY: the reference taken over is never released (ManuallyDrop).
        let obj = ManuallyDrop::new(unsafe { ObjectRef::from_raw(handle) });
        match obj.type_index() {
            kTVMFFIModule => Ok(ManuallyDrop::new(Module(ManuallyDrop::into_inner(obj)))),
            other => Err(not_a_module(other)),
        }
    }

    /// The module of a `ModuleObj*` (what `__tvm_ffi__library_ctx` holds),
    /// borrowed as by [`Module::borrowed`].
    ///
    /// # Safety
    /// `ptr` is NULL or the C++ address of a live module object.
    pub unsafe fn from_cxx_ptr(ptr: *mut c_void) -> Result<ManuallyDrop<Module>> {
        let handle =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| Error::value("`library_ctx` is NULL"))?;
        // SAFETY: the object header follows the vtable pointer.
        let handle = unsafe { handle.add(size_of::<*const c_void>()) }.cast::<TVMFFIObject>();
        // SAFETY: per the contract the object is live.
        unsafe { Module::borrowed(handle) }
    }

    /// The C++ address of the module (`ModuleObj*`), 8 bytes before the handle.
    pub fn cxx_ptr(&self) -> *mut c_void {
        self.handle()
            .cast::<u8>()
            .wrapping_sub(size_of::<*const c_void>())
            .cast()
    }

    /// The object.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    /// The object, given up.
    pub fn into_object(self) -> ObjectRef {
        self.0
    }

    /// The object handle.
    pub fn handle(&self) -> *mut TVMFFIObject {
        self.0.as_ptr()
    }

    /// The `ModuleObj` fields, valid while `self` lives.
    fn cell(&self) -> *mut ModuleCell {
        match self.0.cell_ptr::<ModuleCell>() {
            Some(cell) => cell.as_ptr(),
            // `Module` is only made for objects of type index `ffi.Module`.
            None => unreachable!("a Module of type index {}", self.0.type_index()),
        }
    }

    /// The `imports_` Array (a new reference), if set.
    fn imports_array(&self) -> Option<ObjectRef> {
        let _guard = IMPORTS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the field holds NULL or a live Array the module owns; the
        // lock keeps our writers from replacing it meanwhile.
        NonNull::new(unsafe { (*self.cell()).imports })
            // SAFETY: as above.
            .map(|p| unsafe { ObjectRef::from_borrowed(p) })
    }

    /// The imported modules, in order (non-module entries skipped).
    pub fn imports(&self) -> Vec<Module> {
        let Some(array) = self.imports_array() else {
            return Vec::new();
        };
        seq::elements(&array, kTVMFFIArray)
            .unwrap_or(&[])
            .iter()
            // SAFETY: the array holds valid values.
            .filter_map(|v| unsafe { crate::runtime::AnyView::from_raw(v) }.to_object())
            .filter_map(|o| Module::from_object(o).ok())
            .collect()
    }

    /// Appends `more` to `imports_`: in place when the module holds the
    /// only reference to its Array (amortised constant time per import, as
    /// the reference's `push_back`), else into a new Array.
    fn push_imports(&self, more: Vec<Any>) -> Result<()> {
        let old = {
            let _guard = IMPORTS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: the field holds NULL or a live Array the module owns;
            // looked at without taking a reference, under the lock that
            // keeps our readers from taking one meanwhile.
            let current = NonNull::new(unsafe { (*self.cell()).imports })
                .map(|p| ManuallyDrop::new(unsafe { ObjectRef::from_raw(p) }));
            let more = match &current {
                Some(array) => match seq::append_to_unshared_array(array, more)? {
                    None => return Ok(()),
                    Some(more) => more,
                },
                None => more,
            };
            let mut items: Vec<Any> = match &current {
                Some(array) => seq::elements(array, kTVMFFIArray)?
                    .iter()
                    // SAFETY: stored elements are valid.
                    .map(|v| unsafe { crate::runtime::AnyView::from_raw(v) }.to_owned_any())
                    .collect::<Result<_>>()?,
                None => Vec::new(),
            };
            items.extend(more);
            let new = seq::new_array(items).into_raw_ptr();
            // SAFETY: the field is a pointer slot of the live module; we
            // hand it the new reference and take the old one.
            unsafe { core::ptr::replace(&raw mut (*self.cell()).imports, new) }
        };
        // Released outside the lock: it may destroy modules.
        if let Some(old) = NonNull::new(old) {
            // SAFETY: the field owned this reference.
            drop(unsafe { ObjectRef::from_raw(old) });
        }
        Ok(())
    }

    /// The first answer of `visit` over this module and, with
    /// `query_imports`, its imports depth-first in order (the reference's
    /// recursion), walked with a stack of our own: a 100,000-deep import
    /// chain does not overflow the thread's stack. A module reached twice
    /// (imports may share modules) is visited once: it answered the first
    /// time already.
    fn first_in_tree<T>(
        &self,
        query_imports: bool,
        mut visit: impl FnMut(&Module) -> Result<Option<T>>,
    ) -> Result<Option<T>> {
        let mut stack = vec![self.clone()];
        let mut seen = std::collections::HashSet::new();
        while let Some(m) = stack.pop() {
            if !seen.insert(m.handle() as usize) {
                continue;
            }
            if let Some(found) = visit(&m)? {
                return Ok(Some(found));
            }
            if query_imports {
                stack.extend(m.imports().into_iter().rev());
            }
        }
        Ok(None)
    }

    /// `ModuleObj::GetFunction(name, query_imports)`: this module, then
    /// (if asked) the imports depth-first. `name` is a str value.
    pub fn get_function_named(&self, name: &Any, query_imports: bool) -> Result<Option<Function>> {
        self.first_in_tree(query_imports, |m| m.own_function(name))
    }

    /// `ModuleObj::ImplementsFunction(name, query_imports)`.
    pub fn implements_function(&self, name: &str, query_imports: bool) -> Result<bool> {
        let found =
            self.first_in_tree(query_imports, |m| Ok(m.own_implements(name)?.then_some(())))?;
        Ok(found.is_some())
    }

    /// `ModuleObj::GetFunctionDoc` (`doc`) or `GetFunctionMetadata`, with
    /// `query_imports`.
    pub fn function_info(
        &self,
        name: &str,
        doc: bool,
        query_imports: bool,
    ) -> Result<Option<Vec<u8>>> {
        self.first_in_tree(query_imports, |m| m.own_function_info(name, doc))
    }

    /// The base `ModuleObj::ImportModule`: appends `other`; a RuntimeError
    /// if that would create a cycle (`self` reachable from `other`).
    pub(crate) fn import_base(&self, other: &Module) -> Result<()> {
        let cycle = other
            .first_in_tree(true, |m| Ok((m.handle() == self.handle()).then_some(())))?
            .is_some();
        if cycle {
            return Err(Error::runtime("Cyclic dependency detected during import"));
        }
        self.push_imports(vec![Any::from(other.0.clone())])
    }

    /// Appends `children` to the imports in one step, without the cycle
    /// check of `ImportModule`, as the reference's loader of an embedded
    /// tree fills `imports_`; the caller checks the finished graph with
    /// [`Module::import_cycle`].
    pub(crate) fn append_imports(&self, children: &[&Module]) -> Result<()> {
        if children.is_empty() {
            return Ok(());
        }
        self.push_imports(children.iter().map(|c| Any::from(c.0.clone())).collect())
    }

    /// Whether the imports reachable from `roots` form a cycle: one walk
    /// over them all, linear in the modules and imports.
    pub(crate) fn import_cycle(roots: &[&Module]) -> bool {
        // Per module: on the current path (true) or finished (false).
        let mut state = std::collections::HashMap::new();
        for root in roots {
            if state.contains_key(&(root.handle() as usize)) {
                continue;
            }
            state.insert(root.handle() as usize, true);
            let mut stack = vec![((*root).clone(), root.imports().into_iter())];
            while let Some((_, children)) = stack.last_mut() {
                match children.next() {
                    Some(child) => match state.get(&(child.handle() as usize)) {
                        Some(true) => return true,
                        Some(false) => {}
                        None => {
                            state.insert(child.handle() as usize, true);
                            let grandchildren = child.imports().into_iter();
                            stack.push((child, grandchildren));
                        }
                    },
                    None => {
                        if let Some((done, _)) = stack.pop() {
                            state.insert(done.handle() as usize, false);
                        }
                    }
                }
            }
        }
        false
    }

    /// The base `ModuleObj::ClearImports`.
    pub(crate) fn clear_imports_base(&self) {
        let old = {
            let _guard = IMPORTS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let new = seq::new_array(Vec::new()).into_raw_ptr();
            // SAFETY: the field is a pointer slot of the live module; we
            // hand it the new reference and take the old one.
            unsafe { core::ptr::replace(&raw mut (*self.cell()).imports, new) }
        };
        // Released outside the lock: it may destroy modules.
        if let Some(old) = NonNull::new(old) {
            // SAFETY: the field owned this reference.
            drop(unsafe { ObjectRef::from_raw(old) });
        }
    }

    /// The lookup behind [`Module::lookup_from_imports`], run under its lock:
    /// the cache, else the imports, else the global registry; the result is
    /// cached in `import_lookup_cache_`, which keeps it alive.
    pub(crate) fn lookup_from_imports_locked(&self, name: &str) -> Result<NonNull<TVMFFIObject>> {
        let key = make_text(name.as_bytes(), TextKind::Str);
        // SAFETY: the cell of a live module; only the field's address is taken.
        let slot = unsafe { &raw mut (*self.cell()).import_lookup_cache };
        // SAFETY: the field holds NULL or a live Map the module owns; the
        // caller holds the lookup lock, the only writer.
        let cache = NonNull::new(unsafe { *slot })
            // SAFETY: as above; the module holds the map meanwhile.
            .map(|p| ManuallyDrop::new(unsafe { ObjectRef::from_raw(p) }));
        if let Some(cache) = &cache
            && let Some(hit) = map::get_borrowed(cache, key.view())?
        {
            // The cache keeps its own reference alive.
            return hit
                .as_object_ptr()
                .ok_or_else(|| Error::runtime("import cache holds a non-object"));
        }
        // The imports (not this module itself), depth-first.
        let me = self.handle();
        let found = self.first_in_tree(true, |m| {
            if m.handle() == me {
                return Ok(None);
            }
            m.own_function(&key)
        })?;
        let f = match found {
            Some(f) => f,
            None => {
                crate::runtime::call::registry::get_global(name.as_bytes()).ok_or_else(|| {
                    Error::runtime(format!(
                        "Cannot find function {name} in the imported modules or global registry."
                    ))
                })?
            }
        };
        let ptr = f.as_object().as_non_null();
        let value = Any::from(f.into_object());
        match cache {
            Some(cache) => map::set(&cache, key, value)?,
            None => {
                let new = map::new_map(kTVMFFIMap, [(key, value)])?;
                // SAFETY: the slot was NULL and we hold the lock.
                unsafe { slot.write(new.into_raw_ptr()) };
            }
        }
        Ok(ptr)
    }
}
