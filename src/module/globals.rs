//! The module globals (`ffi.ModuleLoadFromFile`, `ffi.ModuleGetFunction`,
//! ..., `ffi.SystemLib`), with the reference's names and conventions.

use super::library::{load_dso, system_lib};
use super::object::Module;
use super::symbols::LOAD_FROM_FILE_PREFIX;
use crate::abi::*;
use crate::core::error::{Error, Result};
use crate::core::function::{Args, arg_type_error};
use crate::core::string::{TextKind, make_text};
use crate::core::{Any, Function, ObjectRef, registry, seq};
use std::sync::{LazyLock, Mutex};

/// Modules kept alive on request (`ffi.ModuleGlobalsAdd`).
static KEPT: LazyLock<Mutex<Vec<Module>>> = LazyLock::new(Default::default);

fn module_arg(name: &str, args: Args<'_>, i: usize) -> Result<Module> {
    let v = args.get(i);
    v.to_object()
        .filter(|o| o.type_index() == kTVMFFIModule)
        .ok_or_else(|| arg_type_error(name, i, "ffi.Module", v))
        .and_then(Module::from_object)
}

fn str_arg(name: &str, args: Args<'_>, i: usize) -> Result<String> {
    let v = args.get(i);
    let bytes = v
        .as_str_bytes()
        .ok_or_else(|| arg_type_error(name, i, "str", v))?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

fn bool_arg(name: &str, args: Args<'_>, i: usize) -> Result<bool> {
    let v = args.get(i);
    v.as_i64()
        .map(|b| b != 0)
        .ok_or_else(|| arg_type_error(name, i, "bool", v))
}

fn text(bytes: &[u8]) -> Any {
    make_text(bytes, TextKind::Str)
}

fn module_any(m: Module) -> Any {
    Any::from(ObjectRef::clone(m.as_object()))
}

/// `ffi.ModuleLoadFromFile`: the loader of the file's extension
/// (`dll`/`dylib`/`dso` count as `so`).
pub fn load_from_file(path: &str) -> Result<Module> {
    let format = path
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .ok_or_else(|| Error::runtime(format!("Failed to get file format from {path}")))?;
    let format = if matches!(format, "dll" | "dylib" | "dso") {
        "so"
    } else {
        format
    };
    let loader_name = format!("{LOAD_FROM_FILE_PREFIX}{format}");
    let loader = registry::get_global(loader_name.as_bytes()).ok_or_else(|| {
        Error::runtime(format!(
            "Loader for `.{format}` files is not registered, resolved to ({loader_name}) in the global registry."
        ))
    })?;
    let (p, f) = (text(path.as_bytes()), text(format.as_bytes()));
    let out = loader.call(&[*p.view().raw(), *f.view().raw()])?;
    Module::from_object(
        out.view()
            .to_object()
            .ok_or_else(|| Error::type_error(format!("{loader_name} did not return a Module")))?,
    )
}

/// Registers a global taking exactly `n` arguments.
fn fixed(
    add: &mut dyn FnMut(&'static str, Function),
    name: &'static str,
    n: usize,
    f: impl Fn(Args<'_>) -> Result<Any> + Send + Sync + 'static,
) {
    add(
        name,
        Function::from_closure(move |args| {
            args.expect_len(name, n)?;
            f(args)
        }),
    );
}

/// Calls `add(name, function)` for every module global.
pub fn register(add: &mut dyn FnMut(&'static str, Function)) {
    fixed(add, "ffi.ModuleLoadFromFile", 1, |a| {
        Ok(module_any(load_from_file(&str_arg(
            "ffi.ModuleLoadFromFile",
            a,
            0,
        )?)?))
    });
    fixed(add, "ffi.Module.load_from_file.so", 2, |a| {
        Ok(module_any(load_dso(&str_arg(
            "ffi.Module.load_from_file.so",
            a,
            0,
        )?)?))
    });
    add(
        "ffi.SystemLib",
        Function::from_closure(|a| {
            let prefix = if a.is_empty() {
                String::new()
            } else {
                str_arg("ffi.SystemLib", a, 0)?
            };
            Ok(module_any(system_lib(&prefix)?))
        }),
    );
    fixed(add, "ffi.ModuleGetFunction", 3, |a| {
        const N: &str = "ffi.ModuleGetFunction";
        let found = module_arg(N, a, 0)?.get_function(&str_arg(N, a, 1)?, bool_arg(N, a, 2)?)?;
        Ok(found.map_or(Any::NONE, |f| Any::from(f.into_object())))
    });
    fixed(add, "ffi.ModuleImplementsFunction", 3, |a| {
        const N: &str = "ffi.ModuleImplementsFunction";
        Ok(Any::from(module_arg(N, a, 0)?.implements_function(
            &str_arg(N, a, 1)?,
            bool_arg(N, a, 2)?,
        )?))
    });
    for (name, doc) in [
        ("ffi.ModuleGetFunctionDoc", true),
        ("ffi.ModuleGetFunctionMetadata", false),
    ] {
        fixed(add, name, 3, move |a| {
            let found = module_arg(name, a, 0)?.function_info(
                &str_arg(name, a, 1)?,
                doc,
                bool_arg(name, a, 2)?,
            )?;
            Ok(found.map_or(Any::NONE, |t| text(&t)))
        });
    }
    fixed(add, "ffi.ModuleGetKind", 1, |a| {
        Ok(text(
            module_arg("ffi.ModuleGetKind", a, 0)?
                .kind()
                .kind()
                .as_bytes(),
        ))
    });
    fixed(add, "ffi.ModuleGetPropertyMask", 1, |a| {
        Ok(Any::from(
            module_arg("ffi.ModuleGetPropertyMask", a, 0)?
                .kind()
                .property_mask(),
        ))
    });
    fixed(add, "ffi.ModuleInspectSource", 2, |a| {
        const N: &str = "ffi.ModuleInspectSource";
        Ok(text(
            module_arg(N, a, 0)?
                .kind()
                .inspect_source(&str_arg(N, a, 1)?)
                .as_bytes(),
        ))
    });
    fixed(add, "ffi.ModuleGetWriteFormats", 1, |a| {
        let formats = module_arg("ffi.ModuleGetWriteFormats", a, 0)?
            .kind()
            .write_formats();
        Ok(Any::from(seq::new_array(
            formats.iter().map(|f| text(f.as_bytes())).collect(),
        )))
    });
    fixed(add, "ffi.ModuleWriteToFile", 3, |a| {
        const N: &str = "ffi.ModuleWriteToFile";
        module_arg(N, a, 0)?
            .kind()
            .write_to_file(&str_arg(N, a, 1)?, &str_arg(N, a, 2)?)?;
        Ok(Any::NONE)
    });
    fixed(add, "ffi.ModuleImportModule", 2, |a| {
        const N: &str = "ffi.ModuleImportModule";
        module_arg(N, a, 0)?.import(&module_arg(N, a, 1)?)?;
        Ok(Any::NONE)
    });
    fixed(add, "ffi.ModuleClearImports", 1, |a| {
        module_arg("ffi.ModuleClearImports", a, 0)?.clear_imports();
        Ok(Any::NONE)
    });
    fixed(add, "ffi.ModuleGlobalsAdd", 1, |a| {
        let m = module_arg("ffi.ModuleGlobalsAdd", a, 0)?;
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !kept.iter().any(|k| k.as_object() == m.as_object()) {
            kept.push(m);
        }
        Ok(Any::NONE)
    });
    fixed(add, "ffi.ModuleGlobalsRemove", 1, |a| {
        let m = module_arg("ffi.ModuleGlobalsRemove", a, 0)?;
        KEPT.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| k.as_object() != m.as_object());
        Ok(Any::NONE)
    });
}
