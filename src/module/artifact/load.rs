//! `ffi.ArtifactSetLoad`: the one explicit code-loading path of an artifact
//! set, whether it came straight from a compiler or back from disk.
//!
//! The same steps run when a library exported by
//! `ffi.ArtifactSetExportLibrary` is loaded with `ffi.ModuleLoadFromFile`:
//! the library is the host, steps 3 and 4 follow (`attach`).
//!
//! 1. The set's ABI record is checked (the handshake).
//! 2. Artifacts are partitioned by loader. `native` ones (C sources, host
//!    objects) are compiled and linked into one shared library, loaded as
//!    the host module; without any, a library module over the main program
//!    is the host.
//! 3. Every other group, in loader-name order, goes to the global
//!    `ffi.Artifact.loader.<loader>` (`(Array<ffi.Artifact>) -> ffi.Module`);
//!    its module is imported into the host.
//! 4. `constants` artifacts are decoded (tensors point into the artifact's
//!    bytes, nothing is copied) and merged per `codegen_id`; each code module
//!    made from artifacts of that `codegen_id` gets them once, through its
//!    function `__init_constants` (the symbol `__tvm_ffi___init_constants`
//!    of native code), before the load returns, so before any of its
//!    functions can run.

use crate::abi::kTVMFFIMap;
use crate::module::artifact::cuda;
use crate::module::artifact::native::{NATIVE_LOADER, build_native_library};
use crate::module::artifact::set::{Artifact, ArtifactSet, ArtifactSetT, CONSTANTS_LOADER};
use crate::module::load::emit::with_scratch_dir;
use crate::module::load::library::{load_own, main_program};
use crate::module::objects::module::Module;
use crate::module::{artifact::params, artifact::set_record};
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{BytesArg, ModuleT, Obj, Owned};
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{call::registry, value::map, value::seq, value::tensor};
use std::collections::{BTreeMap, BTreeSet};

/// Custom loaders are globals named this prefix plus the loader name.
pub(crate) const LOADER_PREFIX: &str = "ffi.Artifact.loader.";
/// The function a code module with constants receives them through.
pub(crate) const INIT_CONSTANTS: &str = "__init_constants";

/// Loads `set` into a module tree (see the module docs).
pub fn load_set(set: &ArtifactSet) -> Result<Module> {
    set.check_abi()?;
    let native: Vec<Artifact> = set
        .artifacts()
        .into_iter()
        .filter(|a| a.loader() == NATIVE_LOADER)
        .collect();
    let host = if native.is_empty() {
        main_program()?
    } else {
        load_native(&native)?
    };
    attach(set, &host, false, &[])?;
    Ok(host)
}

/// Completes the load of `set` onto `host`, the module of its native code
/// (just built, or the exported library being loaded): the custom loaders'
/// modules are imported into it and every code module gets its constants;
/// the host's own when `native_constants_done` is false (an exported
/// library's bootstrap handed them over at `dlopen`). The loaders in
/// `embedded` are skipped: the library's own tree already imported their
/// modules.
pub(crate) fn attach(
    set: &ArtifactSet,
    host: &Module,
    native_constants_done: bool,
    embedded: &[&str],
) -> Result<()> {
    let mut groups: BTreeMap<String, Vec<Artifact>> = BTreeMap::new();
    for a in set.artifacts() {
        if !embedded.contains(&a.loader()) {
            groups.entry(a.loader().to_owned()).or_default().push(a);
        }
    }
    let constants = groups.remove(CONSTANTS_LOADER).unwrap_or_default();
    // Each code module and the codegen ids it was made from.
    let mut made: Vec<(Option<Module>, BTreeSet<String>)> = Vec::new();
    if let Some(native) = groups.remove(NATIVE_LOADER) {
        let target = (!native_constants_done).then(|| host.clone());
        made.push((target, codegen_ids(&native)));
    }
    for (loader, artifacts) in groups {
        let m = run_loader(&loader, &artifacts)?;
        host.import(&m)?;
        made.push((Some(m), codegen_ids(&artifacts)));
    }
    init_constants(&constants, &made)
}

/// Attaches an artifact set record embedded in a loaded library to the
/// library's module. Its contents stay in the image (mapped for good): they
/// are not copied.
pub(crate) fn attach_record(record: &'static [u8], host: &Module, native_done: bool) -> Result<()> {
    let set = set_record::decode_in_image(record)?;
    attach(&set, host, native_done, &[cuda::CUDA_LOADER])
}

/// The codegen ids of `artifacts`.
fn codegen_ids(artifacts: &[Artifact]) -> BTreeSet<String> {
    artifacts
        .iter()
        .map(|a| a.codegen_id().to_owned())
        .collect()
}

/// Builds the native artifacts into a shared library and loads it. The
/// file is removed once loaded (the image stays mapped).
fn load_native(native: &[Artifact]) -> Result<Module> {
    with_scratch_dir(|dir| {
        let output = dir.join("native.so");
        let own = crate::platform::image::own_shared_object();
        let link: Vec<&std::path::Path> = own.iter().map(|p| p.as_path()).collect();
        build_native_library(dir, native, &link, &output)?;
        load_own(&output)
    })
}

/// Calls the global of a custom loader with its artifacts.
fn run_loader(loader: &str, artifacts: &[Artifact]) -> Result<Module> {
    let name = format!("{LOADER_PREFIX}{loader}");
    let f = registry::get_global(name.as_bytes()).ok_or_else(|| {
        Error::runtime(format!(
            "no loader for the artifacts of loader \"{loader}\": the global `{name}` is not registered"
        ))
    })?;
    let items = artifacts
        .iter()
        .map(|a| Any::from(a.as_object().clone()))
        .collect();
    let result = f.call(&[Any::from(seq::new_array(items)).view()])?;
    result
        .view()
        .to_object()
        .and_then(|o| Module::from_object(o).ok())
        .ok_or_else(|| {
            Error::type_error(format!(
                "`{name}` must return an ffi.Module, got {}",
                crate::runtime::model::type_table::type_key_of(result.view().type_index())
            ))
        })
}

/// The constants of one artifact as `(name, tensor)` pairs; the tensors
/// point into the artifact's bytes and keep the artifact alive.
pub(crate) fn constants_of(a: &Artifact) -> Result<Vec<(String, Any)>> {
    let content = a.content();
    let entries = params::decode(content).map_err(|e| {
        e.rewrap(|m| {
            format!(
                "constants artifact \"{}/{}\": {m}",
                a.codegen_id(),
                a.file_name()
            )
        })
    })?;
    Ok(entries
        .into_iter()
        .map(|e| {
            let data = content[e.offset as usize..].as_ptr().cast_mut().cast();
            // SAFETY: `decode` checked that the data lies within the
            // content, which the artifact (the owner) keeps alive and never
            // changes. Constants are read-only by contract.
            let t =
                unsafe { tensor::cpu_tensor_over(a.as_object().clone(), data, e.dtype, &e.shape) };
            (e.name, Any::from(t))
        })
        .collect())
}

/// Hands every code module the merged constants of its codegen ids (a
/// module of None has had them already).
fn init_constants(
    constants: &[Artifact],
    made: &[(Option<Module>, BTreeSet<String>)],
) -> Result<()> {
    let mut by_id: BTreeMap<&str, Vec<(String, Any)>> = BTreeMap::new();
    for a in constants {
        let merged = by_id.entry(a.codegen_id()).or_default();
        for (name, t) in constants_of(a)? {
            if merged.iter().any(|(n, _)| *n == name) {
                return Err(Error::value(format!(
                    "constant \"{name}\" of codegen_id \"{}\" is defined twice",
                    a.codegen_id()
                )));
            }
            merged.push((name, t));
        }
    }
    for id in by_id.keys() {
        if !made.iter().any(|(_, ids)| ids.contains(*id)) {
            return Err(Error::value(format!(
                "constants of codegen_id \"{id}\" have no code module: no other artifact has that codegen_id"
            )));
        }
    }
    for (module, ids) in made {
        let Some(module) = module else { continue };
        let pairs: Vec<(Any, Any)> = ids
            .iter()
            .filter_map(|id| by_id.get(id.as_str()))
            .flatten()
            .map(|(n, t)| (make_text(n.as_bytes(), TextKind::Str), t.clone()))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let name = make_text(INIT_CONSTANTS.as_bytes(), TextKind::Str);
        let init = module.get_function_named(&name, false)?.ok_or_else(|| {
            Error::value(format!(
                "the module of codegen_id {} has constants but no `{INIT_CONSTANTS}` function \
                 (native code exports it as `__tvm_ffi_{INIT_CONSTANTS}`)",
                ids.iter()
                    .map(|i| format!("\"{i}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let map = map::new_map(kTVMFFIMap, pairs)?;
        init.call(&[Any::from(map).view()])?;
    }
    Ok(())
}

/// Registers `ffi.ArtifactSetLoad`, and the loader of the set record as a
/// module entry (`ffi.Module.load_from_bytes.ffi.ArtifactSet`: the record
/// read back and loaded as by `ffi.ArtifactSetLoad`).
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.Module.load_from_bytes.ffi.ArtifactSet",
        |record: BytesArg<'_>| -> Owned<ModuleT> {
            let set = set_record::decode(record.0)?;
            Ok(Owned::new(load_set(&set)?.into_object()))
        }
    ));
    g.add(typed_fn! {
        "ffi.ArtifactSetLoad",
        |set: Obj<'_, ArtifactSetT>| -> Owned<ModuleT> {
            let set = ArtifactSet::from_object((*set).clone())?;
            Ok(Owned::new(load_set(&set)?.into_object()))
        }
    });
}
