//! The module globals (`ffi.ModuleLoadFromFile`, `ffi.ModuleGetFunction`,
//! ..., `ffi.SystemLib`), with the reference's names and conventions.

use super::emit;
use super::library::{load_dso, release};
use super::system_lib::system_lib;
use crate::abi::*;
use crate::module::format::library_bin::{self, LibraryBin, ModuleEntry};
use crate::module::format::symbols::LOAD_FROM_FILE_PREFIX;
use crate::module::objects::module::Module;
use crate::platform::os;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{
    ArrayRet, BytesAny, BytesArg, ModuleT, Obj, ObjType, Owned, Param, Schema, Str, StrRet,
    obj_type,
};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{Any, AnyView, Function, ObjectRef, call::registry, value::seq};
use core::ffi::c_void;
use std::borrow::Cow;
use std::path::Path;
use std::sync::{LazyLock, Mutex};

/// Modules kept alive on request (`ffi.ModuleGlobalsAdd`).
static KEPT: LazyLock<Mutex<Vec<Module>>> = LazyLock::new(Default::default);

impl Param<'_> for Module {
    fn schema() -> Schema {
        Schema::object("ffi.Module")
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        v.to_object().and_then(|o| Module::from_object(o).ok())
    }
}

/// A `str` argument as an owned Rust string (lossy: names).
fn lossy(s: Str<'_>) -> String {
    String::from_utf8_lossy(s.0).into_owned()
}

/// A `str` argument as a path (see [`os::path_from_bytes`]).
fn path_arg(s: Str<'_>) -> Cow<'_, Path> {
    os::path_from_bytes(s.0)
}

fn text(bytes: &[u8]) -> Any {
    make_text(bytes, TextKind::Str)
}

fn module_ret(m: Module) -> Owned<ModuleT> {
    Owned::new(m.into_object())
}

/// `ffi.ModuleLoadFromFile`: the loader of the file's extension
/// (`dll`/`dylib`/`dso` count as `so`). The path is bytes, as on Unix.
pub fn load_from_file(path: &[u8]) -> Result<Module> {
    let format = path
        .iter()
        .rposition(|&b| b == b'.')
        .map(|dot| String::from_utf8_lossy(&path[dot + 1..]))
        .ok_or_else(|| {
            Error::runtime(format!(
                "Failed to get file format from {}",
                String::from_utf8_lossy(path)
            ))
        })?;
    let format = format.as_ref();
    let format = if matches!(format, "dll" | "dylib" | "dso") {
        "so"
    } else {
        format
    };
    let loader_name = format!("{LOAD_FROM_FILE_PREFIX}{format}");
    let loader = registry::get_global(loader_name.as_bytes()).ok_or_else(|| {
        Error::runtime(format!(
            "Loader for `.{format}` files is not registered, resolved to ({loader_name}) in the global \
             registry.Ensure that you have loaded the correct runtime code, andthat you are on the \
             correct hardware architecture."
        ))
    })?;
    let (p, f) = (text(path), text(format.as_bytes()));
    let out = loader.call(&[p.view(), f.view()])?;
    Module::from_object(
        out.view()
            .to_object()
            .filter(|o| o.type_index() == kTVMFFIModule)
            .ok_or_else(|| {
                crate::runtime::reflect::field::convert_error(out.view(), "ffi.Module")
            })?,
    )
}

/// Registers every module global, in the reference's order.
pub fn register(g: &mut Globals<'_>) {
    register_loading(g);
    register_queries(g);
    register_writing(g);
    register_artifacts(g);
    register_imports(g);
}

/// Loading: a library file, the system library.
fn register_loading(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.ModuleLoadFromFile",
        |path: Str<'_>| -> Owned<ModuleT> { Ok(module_ret(load_from_file(path.0)?)) }
    ));
    g.add(typed_fn! {
        "ffi.Module.load_from_file.so",
        |path: Str<'_>, _format: Str<'_>| -> Owned<ModuleT> {
            Ok(module_ret(load_dso(&path_arg(path))?))
        }
    });
    g.packed(
        "ffi.SystemLib",
        Function::from_closure(|a| {
            let prefix = match a.len() {
                0 => String::new(),
                _ => {
                    let v = a.get(0);
                    let s = v.as_str_bytes().ok_or_else(|| {
                        Error::type_error(format!(
                            "Cannot convert from type `{}` to `str`",
                            crate::runtime::model::type_table::type_key_of(v.type_index())
                        ))
                    })?;
                    String::from_utf8_lossy(s).into_owned()
                }
            };
            Ok(Any::from(module_ret(system_lib(&prefix)?).0))
        }),
    );
}

/// What a module answers: its functions, their docs and metadata, its kind,
/// properties, source and formats.
fn register_queries(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.ModuleGetFunction",
        |m: Module, name: Str<'_>, query_imports: bool| -> Option<Function> {
            m.get_function_named(&name.to_value()?, query_imports)
        }
    ));
    g.add(typed_fn!(
        "ffi.ModuleImplementsFunction",
        |m: Module, name: Str<'_>, query_imports: bool| -> bool {
            m.implements_function(&lossy(name), query_imports)
        }
    ));
    g.add(typed_fn!(
        "ffi.ModuleGetFunctionDoc",
        |m: Module, name: Str<'_>, query_imports: bool| -> Option<StrRet> {
            Ok(m.function_info(&lossy(name), true, query_imports)?
                .map(StrRet))
        }
    ));
    g.add(typed_fn!(
        "ffi.ModuleGetFunctionMetadata",
        |m: Module, name: Str<'_>, query_imports: bool| -> Option<StrRet> {
            Ok(m.function_info(&lossy(name), false, query_imports)?
                .map(StrRet))
        }
    ));
    g.add(typed_fn!("ffi.ModuleGetKind", |m: Module| -> StrRet {
        Ok(StrRet(m.kind_name()?.into_bytes()))
    }));
    g.add(typed_fn!("ffi.ModuleGetPropertyMask", |m: Module| -> i64 {
        m.property_mask()
    }));
    g.add(typed_fn! {
        "ffi.ModuleInspectSource",
        |m: Module, format: Str<'_>| -> StrRet {
            Ok(StrRet(m.inspect_source(&lossy(format))?))
        }
    });
    g.add(typed_fn!(
        "ffi.ModuleGetWriteFormats",
        |m: Module| -> ArrayRet<StrRet> {
            // The module's own formats only, as the reference answers (a
            // library module has none): a DSL decides from these whether a
            // module can export itself. The tree formats every module can be
            // written in through `ffi.ModuleWriteToFile` are listed by
            // `ffi.ModuleTreeWriteFormats`.
            Ok(ArrayRet::new(m.write_formats()?))
        }
    ));
    g.add(typed_fn!(
        "ffi.ModuleTreeWriteFormats",
        || -> ArrayRet<StrRet> {
            let formats = emit::WRITE_FORMATS.iter().map(|f| text(f.as_bytes()));
            Ok(ArrayRet::new(seq::new_array(formats.collect())))
        }
    ));
}

/// Writing a module tree, and modules made of C callbacks.
fn register_writing(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.ModuleWriteToFile",
        |m: Module, path: Str<'_>, format: Str<'_>| -> () {
            let (path, format) = (lossy(path), lossy(format));
            // The tree formats (the whole import tree as a library_bin) come
            // first; anything else is the module kind's own.
            if emit::WRITE_FORMATS.contains(&format.as_str()) {
                emit::write_tree(&m, &path, &format)
            } else {
                m.write_to_file(&path, &format)
            }
        }
    });
    g.add(typed_fn!(
        "ffi.ModuleFromExternC",
        |kind: Str<'_>,
         this: *mut c_void,
         get_function: *mut c_void,
         save_to_bytes: *mut c_void,
         deleter: *mut c_void|
         -> Owned<ModuleT> {
            // SAFETY: the caller passes C callbacks of the documented
            // signatures (module::extern_c), the contract of this global.
            let kind = unsafe {
                crate::module::objects::extern_c::ExternCModule::new(
                    lossy(kind),
                    this,
                    get_function,
                    save_to_bytes,
                    deleter,
                )
            }?;
            Ok(module_ret(Module::new(kind)?))
        }
    ));
}

/// Imports, and the modules the caller keeps (`ffi.ModuleGlobals*`).
fn register_imports(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.ModuleImportModule",
        |m: Module, other: Module| -> () {
            m.import(&other)
        }
    });
    g.add(typed_fn!("ffi.ModuleClearImports", |m: Module| -> () {
        m.clear_imports()
    }));
    g.add(typed_fn!("ffi.ModuleGlobalsAdd", |m: Module| -> () {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !kept.iter().any(|k| k.as_object() == m.as_object()) {
            kept.push(m);
        }
        Ok(())
    }));
    // The caller is done with the module: its library may be unloaded once
    // nothing from it is left (see `library::release`).
    g.add(typed_fn!("ffi.ModuleGlobalsRemove", |m: Module| -> () {
        KEPT.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| k.as_object() != m.as_object());
        release(&m);
        Ok(())
    }));
}

/// Owned copies of the elements of an Array or List argument.
fn elements_of(seq_obj: &ObjectRef) -> Result<Vec<Any>> {
    seq::elements(seq_obj, seq_obj.type_index())?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|e| unsafe { AnyView::from_raw(e) }.to_owned_any())
        .collect()
}

/// `ffi.LibraryBinWrite` input: `[[kind, payload or None, [child, ...]], ...]`.
fn write_blob(entries: &ObjectRef) -> Result<Vec<u8>> {
    const N: &str = "ffi.LibraryBinWrite";
    let entries = elements_of(entries)?;
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
                crate::runtime::AnyView::from_raw(kind),
                crate::runtime::AnyView::from_raw(payload),
                crate::runtime::AnyView::from_raw(children),
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
                unsafe { crate::runtime::AnyView::from_raw(c) }
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
pub(crate) fn describe_tree(modules: &[crate::module::format::inspect::ModuleSummary]) -> Any {
    let rows = modules
        .iter()
        .map(|m| {
            let imports = seq::new_array(m.imports.iter().map(|&c| Any::from(c as i64)).collect());
            let mut row = vec![
                text(m.kind.as_bytes()),
                Any::from(m.size as i64),
                Any::from(imports),
            ];
            // A kind this library reads (`cuda`) adds what its payload holds.
            if !m.detail.is_empty() {
                let lines = m.detail.iter().map(|l| text(l.as_bytes())).collect();
                row.push(Any::from(seq::new_array(lines)));
            }
            Any::from(seq::new_array(row))
        })
        .collect();
    Any::from(seq::new_array(rows))
}

/// The artifact globals, also exported from the library as `__tvm_ffi_*`.
fn register_artifacts(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.LibraryBinWrite",
        |entries: Obj<'_, SeqT>| -> BytesAny {
            Ok(BytesAny(make_text(&write_blob(&entries)?, TextKind::Bytes)))
        }
    });
    g.add(typed_fn!(
        "ffi.LibraryBinInspect",
        |blob: BytesArg<'_>| -> Any {
            let tree = library_bin::parse(blob.0)?;
            let summary = crate::module::format::inspect::summarize(&tree);
            Ok(describe_tree(&summary))
        }
    ));
    g.add(typed_fn! {
        "ffi.LibraryBinToCSource",
        |blob: BytesArg<'_>| -> StrRet {
            Ok(StrRet(emit::to_c_source(blob.0).into_bytes()))
        }
    });
    g.add(typed_fn! {
        "ffi.LibraryBinWriteObject",
        |blob: BytesArg<'_>, path: Str<'_>| -> () {
            let path = path_arg(path);
            library_bin::parse(blob.0)?;
            std::fs::write(&path, emit::to_object_file(blob.0)?)
                .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
        }
    });
    g.add(typed_fn!(
        "ffi.LibraryBinBuildSharedLibrary",
        |blob: BytesArg<'_>, objects: Obj<'_, SeqT>, out: Str<'_>| -> () {
            const N: &str = "ffi.LibraryBinBuildSharedLibrary";
            library_bin::parse(blob.0)?;
            let objects = elements_of(&objects)?;
            let paths: Vec<Cow<'_, Path>> = objects
                .iter()
                .map(|o| o.view().as_str_bytes().map(os::path_from_bytes))
                .collect::<Option<_>>()
                .ok_or_else(|| Error::type_error(format!("{N}: objects must be paths (str)")))?;
            let paths: Vec<&Path> = paths.iter().map(|p| &**p).collect();
            emit::build_shared_library(blob.0, &paths, &path_arg(out))
        }
    ));
}

obj_type!(
    /// An Array or a List (a sequence argument of the artifact globals).
    SeqT,
    Schema::object("ffi.Array"),
    exact kTVMFFIArray,
    kTVMFFIList
);
