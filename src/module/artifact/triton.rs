//! Triton kernels as artifacts (loader `triton`): each kernel is three
//! artifacts of one `codegen_id`, named after the kernel's file stem as
//! Triton's cache names them:
//!
//! - `<stem>.cubin`, format `cubin`: the code;
//! - `<stem>.json`, format [`METADATA_FORMAT`]: Triton's metadata;
//! - `<stem>.ttir` (or `.source`), format [`SIGNATURE_FORMAT`]: the TTIR
//!   or source whose `tt.func` line gives the parameters.
//!
//! `ffi.Artifact.loader.triton` makes one `triton` module per `codegen_id`
//! (the first imports the others), whose functions are the kernels by
//! symbol. `ffi.TritonCacheToArtifacts(codegen_id, dir)` reads a cache
//! entry as Triton writes it; `ffi.TritonKernelToArtifacts(codegen_id,
//! stem, cubin, metadata, signature)` takes the same from memory (what
//! `triton.compile` returns in `asm` and `metadata`).
#![forbid(unsafe_code)]

use crate::module::artifact::set::{
    Artifact, array_of_artifacts, artifacts_of_array, first_importing_rest,
};
use crate::module::format::triton_cache::{parse_metadata, parse_signature};
use crate::module::objects::module::Module;
use crate::module::triton::TritonModule;
use crate::module::triton::kernel::TritonKernel;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{ArrayT, BytesArg, ModuleT, Obj, Owned, Str};
use crate::runtime::model::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The loader of Triton artifacts.
pub const TRITON_LOADER: &str = "triton";
/// The format of the metadata artifact.
pub const METADATA_FORMAT: &str = "triton_metadata";
/// The format of the signature artifact (TTIR or source).
pub const SIGNATURE_FORMAT: &str = "triton_signature";
/// The format of the code artifact.
const CODE_FORMAT: &str = "cubin";
/// A cache entry's files are read up to this size.
const MAX_FILE: u64 = 1 << 30;

/// The three artifacts of one kernel.
pub fn kernel_artifacts(
    codegen_id: &str,
    stem: &str,
    cubin: &[u8],
    metadata: &[u8],
    signature: &[u8],
) -> Result<Vec<Artifact>> {
    let name = parse_metadata(metadata)?.name;
    Ok(vec![
        Artifact::builder(codegen_id, TRITON_LOADER, &format!("{stem}.cubin"))
            .content(cubin)
            .format(CODE_FORMAT)
            .entry_functions(&[name.as_str()])
            .build()?,
        Artifact::builder(codegen_id, TRITON_LOADER, &format!("{stem}.json"))
            .content(metadata)
            .format(METADATA_FORMAT)
            .build()?,
        Artifact::builder(codegen_id, TRITON_LOADER, &format!("{stem}.ttir"))
            .content(signature)
            .format(SIGNATURE_FORMAT)
            .build()?,
    ])
}

/// The artifacts of the cache entry `dir` (`<stem>.cubin`, `<stem>.json`,
/// `<stem>.ttir` or `<stem>.source`, per kernel; other files are Triton's
/// intermediate stages and are left out). Only regular files are read.
pub fn cache_artifacts(codegen_id: &str, dir: &Path) -> Result<Vec<Artifact>> {
    let at = |why: String| Error::value(format!("Triton cache entry {}: {why}", dir.display()));
    let mut stems: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| at(e.to_string()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".json")?;
            (!stem.starts_with("__grp__")).then(|| stem.to_owned())
        })
        .collect();
    stems.sort();
    if stems.is_empty() {
        return Err(at("no kernel metadata (<name>.json)".into()));
    }
    let read = |name: &str| -> Result<Option<Vec<u8>>> {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Ok(None);
        };
        if !meta.is_file() {
            return Err(at(format!("{name} is not a regular file")));
        }
        if meta.len() > MAX_FILE {
            return Err(at(format!(
                "{name} is {} bytes, more than {MAX_FILE}",
                meta.len()
            )));
        }
        std::fs::read(&path)
            .map(Some)
            .map_err(|e| at(format!("{name}: {e}")))
    };
    let mut out = Vec::new();
    for stem in stems {
        let need = |name: String| read(&name)?.ok_or_else(|| at(format!("{name} is missing")));
        let metadata = need(format!("{stem}.json"))?;
        let cubin = need(format!("{stem}.cubin"))?;
        let signature = match read(&format!("{stem}.ttir"))? {
            Some(s) => s,
            None => need(format!("{stem}.source"))?,
        };
        out.extend(kernel_artifacts(
            codegen_id, &stem, &cubin, &metadata, &signature,
        )?);
    }
    Ok(out)
}

/// The kernels of each `codegen_id` among Triton `artifacts`, in id order.
pub(crate) fn kernels(artifacts: &[Artifact]) -> Result<Vec<(String, Vec<TritonKernel>)>> {
    type Parts<'a> = [Option<&'a Artifact>; 3];
    let mut groups: BTreeMap<&str, BTreeMap<String, Parts<'_>>> = BTreeMap::new();
    for a in artifacts.iter().filter(|a| a.loader() == TRITON_LOADER) {
        let id = a.codegen_id();
        let file = a.file_name();
        let stem = file.rsplit_once('.').map_or(file, |(s, _)| s).to_owned();
        let slot = match a.format().as_deref() {
            Some(CODE_FORMAT) => 0,
            Some(METADATA_FORMAT) => 1,
            Some(SIGNATURE_FORMAT) => 2,
            other => {
                return Err(Error::value(format!(
                    "Triton artifact {id}/{file}: format {:?} is none of {CODE_FORMAT}, \
                     {METADATA_FORMAT} or {SIGNATURE_FORMAT}",
                    other.unwrap_or_default()
                )));
            }
        };
        let parts = groups
            .entry(id)
            .or_default()
            .entry(stem.clone())
            .or_default();
        if parts[slot].replace(a).is_some() {
            return Err(Error::value(format!(
                "Triton artifacts {id}/{stem}: more than one of format {}",
                a.format().unwrap_or_default()
            )));
        }
    }
    let mut out = Vec::new();
    for (id, stems) in groups {
        let mut ks = Vec::new();
        for (stem, [code, meta, sig]) in stems {
            let missing =
                |what: &str| Error::value(format!("Triton artifacts {id}/{stem}: no {what}"));
            let code = code.ok_or_else(|| missing("cubin"))?;
            let meta =
                meta.ok_or_else(|| missing(&format!("metadata (format {METADATA_FORMAT})")))?;
            let sig =
                sig.ok_or_else(|| missing(&format!("signature (format {SIGNATURE_FORMAT})")))?;
            let within = |e: Error| e.rewrap(|m| format!("{id}/{stem}: {m}"));
            ks.push(
                TritonKernel::new(
                    code.content().to_vec(),
                    parse_metadata(meta.content()).map_err(within)?,
                    parse_signature(sig.content()).map_err(within)?,
                )
                .map_err(within)?,
            );
        }
        out.push((id.to_owned(), ks));
    }
    Ok(out)
}

/// Describes a Triton artifact (its metadata's launch parameters, its
/// signature's parameters); the code is listed as any cubin is.
pub(crate) fn describe(a: &Artifact) -> Result<String> {
    Ok(match a.format().as_deref() {
        Some(METADATA_FORMAT) => {
            let m = parse_metadata(a.content())?;
            format!(
                "  Triton {} kernel {}: sm_{}, num_warps {}, num_ctas {}, shared {} bytes\n",
                m.release(),
                m.name,
                m.arch,
                m.num_warps,
                m.num_ctas,
                m.shared
            )
        }
        Some(SIGNATURE_FORMAT) => {
            let s = parse_signature(a.content())?;
            let params: Vec<String> = s
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name, p.ty.spelling()))
                .collect();
            format!("  kernel {}({})\n", s.name, params.join(", "))
        }
        _ => String::new(),
    })
}

/// The Triton kernels of `artifacts`, per `codegen_id`, each described and
/// checked against its cubin; a group that cannot be read gives one line
/// saying why.
pub fn describe_kernels(artifacts: &[Artifact]) -> Vec<(String, Vec<String>)> {
    let ids: Vec<&str> = {
        let mut ids: Vec<&str> = artifacts
            .iter()
            .filter(|a| a.loader() == TRITON_LOADER)
            .map(|a| a.codegen_id())
            .collect();
        ids.dedup();
        ids
    };
    match kernels(artifacts) {
        Ok(groups) => groups
            .into_iter()
            .map(|(id, ks)| (id, ks.iter().flat_map(TritonKernel::describe).collect()))
            .collect(),
        Err(e) if !ids.is_empty() => vec![(ids.join(", "), vec![format!("unreadable: {e}")])],
        Err(_) => Vec::new(),
    }
}

/// `ffi.Artifact.loader.triton`: a module per `codegen_id`, the first
/// importing the others.
pub fn load(artifacts: &[Artifact]) -> Result<Module> {
    first_importing_rest(
        kernels(artifacts)?
            .into_iter()
            .map(|(_, ks)| Module::new(TritonModule::new(ks))),
        "ffi.Artifact.loader.triton",
    )
}

/// Registers `ffi.Artifact.loader.triton`, `ffi.TritonCacheToArtifacts`
/// and `ffi.TritonKernelToArtifacts`.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.Artifact.loader.triton",
        |artifacts: Obj<'_, ArrayT>| -> Owned<ModuleT> {
            let items = artifacts_of_array(&artifacts, "ffi.Artifact.loader.triton")?;
            Ok(Owned::new(load(&items)?.into_object()))
        }
    });
    g.add(typed_fn! {
        "ffi.TritonCacheToArtifacts",
        |codegen_id: Str<'_>, dir: Str<'_>| -> Owned<ArrayT> {
            let codegen_id = String::from_utf8_lossy(codegen_id.0);
            let dir = crate::platform::os::path_from_bytes(dir.0);
            Ok(array_of_artifacts(cache_artifacts(&codegen_id, &dir)?))
        }
    });
    g.add(typed_fn! {
        "ffi.TritonKernelToArtifacts",
        |codegen_id: Str<'_>, stem: Str<'_>, cubin: BytesArg<'_>, metadata: Str<'_>, signature: Str<'_>| -> Owned<ArrayT> {
            let codegen_id = String::from_utf8_lossy(codegen_id.0);
            let stem = String::from_utf8_lossy(stem.0);
            Ok(array_of_artifacts(kernel_artifacts(&codegen_id, &stem, cubin.0, metadata.0, signature.0)?))
        }
    });
}
