//! Module objects: a kind implemented by Rust ([`ModuleKind`]) or C
//! callbacks, plus the import tree (an Array of modules). Only the header is
//! public: frontends reach modules through the `ffi.Module*` globals, as
//! the reference's Python package does.

use crate::abi::*;
use crate::core::any::Any;
use crate::core::error::{Error, Result};
use crate::core::object::{ObjectRef, new_object};
use crate::core::{Function, seq};
use std::collections::HashMap;
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

/// The payload of module objects.
struct ModulePayload {
    /// The imported modules, an Array (replaced, never mutated, on change).
    imports: Mutex<ObjectRef>,
    kind: Box<dyn ModuleKind>,
    /// Functions found by `TVMFFIEnvModLookupFromImports`, kept alive here.
    lookup_cache: Mutex<HashMap<String, Function>>,
}

/// A strong reference to a module object.
#[derive(Clone, Debug)]
pub struct Module(ObjectRef);

impl Module {
    /// Makes a module of `kind` with no imports.
    pub fn new(kind: impl ModuleKind) -> Module {
        let payload = ModulePayload {
            imports: Mutex::new(seq::new_array(Vec::new())),
            kind: Box::new(kind),
            lookup_cache: Mutex::new(HashMap::new()),
        };
        Module(new_object(kTVMFFIModule, payload))
    }

    /// Views an object as one of our modules.
    pub fn from_object(obj: ObjectRef) -> Result<Module> {
        if obj.type_index() != kTVMFFIModule || !is_ours(&obj) {
            return Err(Error::type_error(format!(
                "expected an ffi.Module made by this library, got {}",
                crate::core::type_table::type_key_of(obj.type_index())
            )));
        }
        Ok(Module(obj))
    }

    /// The object.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    fn payload(&self) -> &ModulePayload {
        // SAFETY: `from_object`/`new` guarantee our module layout.
        unsafe { self.0.payload::<ModulePayload>() }
    }

    /// The module kind.
    pub fn kind(&self) -> &dyn ModuleKind {
        &*self.payload().kind
    }

    /// The imported modules, in order.
    pub fn imports(&self) -> Vec<Module> {
        let cell = self
            .payload()
            .imports
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        seq::elements(&cell, kTVMFFIArray)
            .unwrap_or(&[])
            .iter()
            // SAFETY: the imports array holds live module objects.
            .filter_map(|v| unsafe { crate::core::AnyView::from_raw(v) }.to_object())
            .filter_map(|o| Module::from_object(o).ok())
            .collect()
    }

    /// `ModuleObj::GetFunction(name, query_imports)`: this module, then
    /// (if asked) the imports depth-first.
    pub fn get_function(&self, name: &str, query_imports: bool) -> Result<Option<Function>> {
        if let Some(f) = self.kind().get_function(self, name)? {
            return Ok(Some(f));
        }
        if query_imports {
            for m in self.imports() {
                if let Some(f) = m.get_function(name, true)? {
                    return Ok(Some(f));
                }
            }
        }
        Ok(None)
    }

    /// Whether the function exists here (or in the imports).
    pub fn implements_function(&self, name: &str, query_imports: bool) -> Result<bool> {
        if self.kind().implements_function(self, name)? {
            return Ok(true);
        }
        if query_imports {
            for m in self.imports() {
                if m.implements_function(name, true)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Doc (`doc == true`) or metadata of a function, searching imports if asked.
    pub fn function_info(
        &self,
        name: &str,
        doc: bool,
        query_imports: bool,
    ) -> Result<Option<Vec<u8>>> {
        let mine = if doc {
            self.kind().function_doc(name)?
        } else {
            self.kind().function_metadata(name)?
        };
        if mine.is_some() || !query_imports {
            return Ok(mine);
        }
        for m in self.imports() {
            if let Some(found) = m.function_info(name, doc, true)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Imports `other`; a RuntimeError if that would create a cycle.
    pub fn import(&self, other: &Module) -> Result<()> {
        let mut stack = vec![other.clone()];
        let mut seen = vec![other.0.as_ptr()];
        while let Some(m) = stack.pop() {
            if m.0.as_ptr() == self.0.as_ptr() {
                return Err(Error::runtime("Cyclic dependency detected during import"));
            }
            for child in m.imports() {
                if !seen.contains(&child.0.as_ptr()) {
                    seen.push(child.0.as_ptr());
                    stack.push(child);
                }
            }
        }
        let mut cell = self
            .payload()
            .imports
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut items: Vec<Any> = seq::elements(&cell, kTVMFFIArray)?
            .iter()
            // SAFETY: stored elements are valid.
            .map(|v| unsafe { crate::core::AnyView::from_raw(v) }.to_owned_any())
            .collect::<Result<_>>()?;
        items.push(Any::from(other.0.clone()));
        *cell = seq::new_array(items);
        Ok(())
    }

    /// Drops all imports.
    pub fn clear_imports(&self) {
        let mut cell = self
            .payload()
            .imports
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *cell = seq::new_array(Vec::new());
    }

    /// `TVMFFIEnvModLookupFromImports`: the imports, then the global
    /// registry; the result is cached (and kept alive) by the module.
    pub fn lookup_from_imports(&self, name: &str) -> Result<Function> {
        let mut cache = self
            .payload()
            .lookup_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(f) = cache.get(name) {
            return Ok(f.clone());
        }
        let mut found = None;
        for m in self.imports() {
            if let Some(f) = m.get_function(name, true)? {
                found = Some(f);
                break;
            }
        }
        let f = match found {
            Some(f) => f,
            None => crate::core::registry::get_global(name.as_bytes()).ok_or_else(|| {
                Error::runtime(format!(
                    "Cannot find function {name} in the imported modules or global registry."
                ))
            })?,
        };
        cache.insert(name.to_string(), f.clone());
        Ok(f)
    }
}

/// Whether a module object was made by this library (foreign ones have a
/// different layout behind the shared header).
fn is_ours(obj: &ObjectRef) -> bool {
    // SAFETY: the header is readable for any live object.
    let deleter = unsafe { (*obj.as_ptr()).deleter };
    deleter.map(|d| d as usize)
        == crate::core::object::deleter_of::<ModulePayload>().map(|d| d as usize)
}
