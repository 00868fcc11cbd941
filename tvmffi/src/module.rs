//! [`Module`]: a loaded library or module tree, whose functions are looked
//! up by name.

use crate::any::Any;
use crate::convert::IntoAny;
use crate::error::{Error, Result};
use crate::function::{Function, call_global};
use crate::handle::Obj;
use crate::sys;

/// A module (`ffi.Module`): a shared library exporting `__tvm_ffi_<name>`
/// functions, or a tree of modules built from artifacts.
#[derive(Clone)]
pub struct Module(Obj);

impl Module {
    /// Loads a module from a file (a shared library, or a kind whose
    /// loader is registered).
    pub fn load(path: &str) -> Result<Module> {
        let path = path.into_any()?;
        let module = call_global("ffi.ModuleLoadFromFile", &[path.view()])?;
        module.get::<Module>().ok_or_else(|| {
            Error::type_error(format!(
                "ffi.ModuleLoadFromFile returned `{}`",
                module.type_key()
            ))
        })
    }
    /// The function `name` (searching imported modules too), or a
    /// `ValueError` naming it.
    pub fn function(&self, name: &str) -> Result<Function> {
        let (me, key, imports) = (Any::from_obj(&self.0), name.into_any()?, true.into_any()?);
        let found = call_global(
            "ffi.ModuleGetFunction",
            &[me.view(), key.view(), imports.view()],
        )?;
        found
            .get::<Function>()
            .ok_or_else(|| Error::value_error(format!("module has no function `{name}`")))
    }
    /// The docstring an exported function carries, if any.
    pub fn function_doc(&self, name: &str) -> Result<Option<String>> {
        let (me, key, imports) = (Any::from_obj(&self.0), name.into_any()?, true.into_any()?);
        let doc = call_global(
            "ffi.ModuleGetFunctionDoc",
            &[me.view(), key.view(), imports.view()],
        )?;
        Ok(doc.get::<Option<String>>().flatten())
    }
}

crate::convert::object_conversions!(Module, "ffi.Module", sys::MODULE);
