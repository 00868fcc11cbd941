//! The module globals (`ffi.ModuleLoadFromFile`, `ffi.ModuleGetFunction`,
//! ..., `ffi.SystemLib`), with the reference's names and conventions.

use super::artifact;
use super::library::{load_dso, system_lib};
use super::library_bin::{self, LIB_KIND, LibraryBin, ModuleEntry};
use super::object::Module;
use super::symbols::LOAD_FROM_FILE_PREFIX;
use crate::abi::*;
use crate::core::error::{Error, Result};
use crate::core::function::{Args, arg_type_error, register_fixed as fixed};
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
        let mut formats = module_arg("ffi.ModuleGetWriteFormats", a, 0)?
            .kind()
            .write_formats();
        formats.extend(artifact::WRITE_FORMATS.iter().map(|f| f.to_string()));
        Ok(Any::from(seq::new_array(
            formats.iter().map(|f| text(f.as_bytes())).collect(),
        )))
    });
    fixed(add, "ffi.ModuleWriteToFile", 3, |a| {
        const N: &str = "ffi.ModuleWriteToFile";
        let (module, path, format) = (module_arg(N, a, 0)?, str_arg(N, a, 1)?, str_arg(N, a, 2)?);
        // The tree formats (the whole import tree as a library_bin) come
        // first; anything else is the module kind's own.
        if artifact::WRITE_FORMATS.contains(&format.as_str()) {
            artifact::write_tree(&module, &path, &format)?;
        } else {
            module.kind().write_to_file(&path, &format)?;
        }
        Ok(Any::NONE)
    });
    add(
        "ffi.ModuleFromExternC",
        Function::from_closure(|a| {
            const N: &str = "ffi.ModuleFromExternC";
            a.expect_len(N, 5)?;
            let ptr = |i| {
                let v = a.get(i);
                v.as_opaque_ptr()
                    .ok_or_else(|| arg_type_error(N, i, "void*", v))
            };
            // SAFETY: the caller passes C callbacks of the documented
            // signatures (module::extern_c), the contract of this global.
            let kind = unsafe {
                super::extern_c::ExternCModule::new(
                    str_arg(N, a, 0)?,
                    ptr(1)?,
                    ptr(2)?,
                    ptr(3)?,
                    ptr(4)?,
                )
            }?;
            Ok(module_any(Module::new(kind)))
        }),
    );
    register_artifacts(add);
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

fn bytes_arg<'a>(name: &str, args: Args<'a>, i: usize) -> Result<&'a [u8]> {
    let v = args.get(i);
    v.as_bytes()
        .ok_or_else(|| arg_type_error(name, i, "bytes", v))
}

fn seq_arg(name: &str, args: Args<'_>, i: usize) -> Result<Vec<Any>> {
    let v = args.get(i);
    let obj = v
        .to_object()
        .filter(|o| matches!(o.type_index(), kTVMFFIArray | kTVMFFIList))
        .ok_or_else(|| arg_type_error(name, i, "ffi.Array", v))?;
    seq::elements(&obj, obj.type_index())?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|e| unsafe { crate::core::AnyView::from_raw(e) }.to_owned_any())
        .collect()
}

/// `ffi.LibraryBinWrite` input: `[[kind, payload or None, [child, ...]], ...]`.
fn write_blob(args: Args<'_>) -> Result<Vec<u8>> {
    const N: &str = "ffi.LibraryBinWrite";
    let entries = seq_arg(N, args, 0)?;
    let mut owned: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    let mut imports = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let bad = || {
            Error::type_error(format!(
                "{N}: entry {i} must be [kind: str, payload: bytes or None, imports: [int]]"
            ))
        };
        let obj = e
            .view()
            .to_object()
            .filter(|o| matches!(o.type_index(), kTVMFFIArray | kTVMFFIList))
            .ok_or_else(bad)?;
        let parts = seq::elements(&obj, obj.type_index())?;
        let [kind, payload, children] = parts else {
            return Err(bad());
        };
        // SAFETY: stored elements are valid.
        let (kind, payload, children) = unsafe {
            (
                crate::core::AnyView::from_raw(kind),
                crate::core::AnyView::from_raw(payload),
                crate::core::AnyView::from_raw(children),
            )
        };
        let kind = kind.as_str_bytes().ok_or_else(bad)?.to_vec();
        let payload = if payload.type_index() == kTVMFFINone {
            None
        } else {
            Some(payload.as_bytes().ok_or_else(bad)?.to_vec())
        };
        let children = children.to_object().ok_or_else(bad)?;
        let children = seq::elements(&children, children.type_index())?
            .iter()
            .map(|c| {
                // SAFETY: stored elements are valid.
                unsafe { crate::core::AnyView::from_raw(c) }
                    .as_i64()
                    .and_then(|c| usize::try_from(c).ok())
                    .ok_or_else(bad)
            })
            .collect::<Result<Vec<usize>>>()?;
        owned.push((kind, payload));
        imports.push(children);
    }
    let modules = owned
        .iter()
        .map(|(k, p)| ModuleEntry {
            kind: k,
            payload: p.as_deref(),
        })
        .collect();
    library_bin::write(&LibraryBin { modules, imports })
        .map_err(|e| Error::value(format!("{N}: {e}")))
}

/// `[[kind, payload size, [child, ...]], ...]` of a decoded tree.
fn describe_tree(modules: &[super::inspect::ModuleSummary]) -> Any {
    let rows = modules
        .iter()
        .map(|m| {
            let imports = seq::new_array(m.imports.iter().map(|&c| Any::from(c as i64)).collect());
            Any::from(seq::new_array(vec![
                text(m.kind.as_bytes()),
                Any::from(m.size as i64),
                Any::from(imports),
            ]))
        })
        .collect();
    Any::from(seq::new_array(rows))
}

/// The artifact globals, also exported from the library as `__tvm_ffi_*`.
fn register_artifacts(add: &mut dyn FnMut(&'static str, Function)) {
    fixed(add, "ffi.LibraryBinWrite", 1, |a| {
        Ok(make_text(&write_blob(a)?, TextKind::Bytes))
    });
    fixed(add, "ffi.LibraryBinInspect", 1, |a| {
        let tree = library_bin::parse(bytes_arg("ffi.LibraryBinInspect", a, 0)?)
            .map_err(|e| Error::value(e.to_string()))?;
        let summary: Vec<_> = tree
            .modules
            .iter()
            .zip(&tree.imports)
            .map(|(m, imports)| super::inspect::ModuleSummary {
                kind: String::from_utf8_lossy(m.kind).into_owned(),
                size: if m.kind == LIB_KIND {
                    0
                } else {
                    m.payload.map_or(0, <[u8]>::len)
                },
                imports: imports.clone(),
            })
            .collect();
        Ok(describe_tree(&summary))
    });
    fixed(add, "ffi.LibraryBinToCSource", 1, |a| {
        Ok(text(
            artifact::to_c_source(bytes_arg("ffi.LibraryBinToCSource", a, 0)?).as_bytes(),
        ))
    });
    fixed(add, "ffi.LibraryBinWriteObject", 2, |a| {
        const N: &str = "ffi.LibraryBinWriteObject";
        let (blob, path) = (bytes_arg(N, a, 0)?, str_arg(N, a, 1)?);
        library_bin::parse(blob).map_err(|e| Error::value(e.to_string()))?;
        std::fs::write(&path, artifact::to_object_file(blob)?)
            .map_err(|e| Error::runtime(format!("cannot write {path}: {e}")))?;
        Ok(Any::NONE)
    });
    fixed(add, "ffi.LibraryBinBuildSharedLibrary", 3, |a| {
        const N: &str = "ffi.LibraryBinBuildSharedLibrary";
        let blob = bytes_arg(N, a, 0)?;
        library_bin::parse(blob).map_err(|e| Error::value(e.to_string()))?;
        let objects: Vec<String> = seq_arg(N, a, 1)?
            .iter()
            .map(|o| {
                o.view()
                    .as_str_bytes()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
            })
            .collect::<Option<_>>()
            .ok_or_else(|| Error::type_error(format!("{N}: objects must be paths (str)")))?;
        let paths: Vec<&std::path::Path> = objects.iter().map(std::path::Path::new).collect();
        artifact::build_shared_library(blob, &paths, std::path::Path::new(&str_arg(N, a, 2)?))?;
        Ok(Any::NONE)
    });
    fixed(add, "ffi.InspectFile", 1, |a| {
        let path = str_arg("ffi.InspectFile", a, 0)?;
        let data =
            std::fs::read(&path).map_err(|e| Error::runtime(format!("cannot read {path}: {e}")))?;
        let found = super::inspect::inspect(&data)?;
        let functions =
            seq::new_array(found.functions.iter().map(|f| text(f.as_bytes())).collect());
        let modules = found
            .library_bin
            .as_deref()
            .map_or(Any::NONE, describe_tree);
        Ok(Any::from(seq::new_array(vec![
            Any::from(functions),
            modules,
        ])))
    });
}
