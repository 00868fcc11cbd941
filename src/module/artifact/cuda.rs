//! CUDA code as artifacts (loader `cuda`): TVM's `CUDAModule` split into
//! the three artifacts seed 000 asks for, per `codegen_id`:
//!
//! - the device code: format `ptx`, `cubin`, `fatbin` or `cuda` (source);
//! - its format as TVM labels it: format [`FORMAT_FORMAT`], the label as
//!   text (optional: the code artifact's format otherwise);
//! - the function table: format [`TABLE_FORMAT`], a JSON object from
//!   kernel name to TVM's own `FunctionInfo` keys (`name`, `arg_types`,
//!   `launch_param_tags`, `arg_extra_tags`), in table order.
//!
//! `ffi.Artifact.loader.cuda` makes one `cuda` module per `codegen_id`
//! (the first imports the others); an exported library also holds each as
//! a `cuda` entry of its `__tvm_ffi__library_bin`, imported by the library
//! itself, so TVM's runtime loads it too. `ffi.CUDAModuleToArtifacts`
//! splits a serialized module (what TVM embeds) into the three artifacts.
#![forbid(unsafe_code)]

use crate::abi::DLDataType;
use crate::module::artifact::set::{
    Artifact, array_of_artifacts, artifacts_of_array, first_importing_rest,
};
use crate::module::cuda::CudaModule;
use crate::module::format::cuda_blob::{self, CudaBlob, FunctionInfo};
use crate::module::format::device_code;
use crate::module::objects::module::Module;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{ArrayT, BytesArg, ModuleT, Obj, Owned, Str};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, str_bytes_of};
use crate::runtime::value::{dtype, json, map, seq};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The loader of CUDA artifacts.
pub const CUDA_LOADER: &str = "cuda";
/// The format of the artifact holding TVM's label of the code's format.
pub const FORMAT_FORMAT: &str = "cuda_format";
/// The format of the function-table artifact.
pub const TABLE_FORMAT: &str = "cuda_function_table";
/// The code formats TVM records.
const CODE_FORMATS: [&str; 4] = ["ptx", "cubin", "fatbin", "cuda"];

/// The function table as JSON (TVM's `FunctionInfo::SaveToJSON` per kernel).
pub fn table_to_json(functions: &[(String, FunctionInfo)]) -> Result<String> {
    let quote = |s: &str| {
        let mut out = String::new();
        json::escape(s.as_bytes(), &mut out);
        out
    };
    let mut out = String::from("{");
    for (i, (key, info)) in functions.iter().enumerate() {
        let types = info
            .arg_types
            .iter()
            .map(|t| dtype::to_string(*t).map(|s| quote(&s)))
            .collect::<Result<Vec<_>>>()?;
        let tags: Vec<String> = info.launch_param_tags.iter().map(|t| quote(t)).collect();
        let extra: Vec<String> = info.arg_extra_tags.iter().map(i32::to_string).collect();
        let _ = write!(
            out,
            "{}\n  {}: {{\"name\": {}, \"arg_types\": [{}], \"launch_param_tags\": [{}], \
             \"arg_extra_tags\": [{}]}}",
            if i == 0 { "" } else { "," },
            quote(key),
            quote(&info.name),
            types.join(", "),
            tags.join(", "),
            extra.join(", ")
        );
    }
    out.push_str("\n}\n");
    Ok(out)
}

fn text(v: AnyView<'_>, what: &dyn Fn() -> String) -> Result<String> {
    str_bytes_of(v, TextKind::Str)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .ok_or_else(|| Error::type_error(format!("{} must be a string", what())))
}

fn list(v: &Any, what: &dyn Fn() -> String) -> Result<Vec<Any>> {
    let not_list = || Error::type_error(format!("{} must be a list", what()));
    let obj = v.view().to_object().ok_or_else(not_list)?;
    let t = obj.type_index();
    seq::views(&obj, t)
        .map_err(|_| not_list())?
        .map(|x| x.to_owned_any())
        .collect()
}

/// Reads a function table written by [`table_to_json`] (or by hand, with
/// TVM's keys; `thread_axis_tags` is the older name of
/// `launch_param_tags`).
pub fn table_from_json(bytes: &[u8]) -> Result<Vec<(String, FunctionInfo)>> {
    let doc = json::parse(bytes).map_err(|e| e.rewrap(|m| format!("CUDA function table: {m}")))?;
    let obj = doc
        .view()
        .to_object()
        .filter(|o| o.type_index() == crate::abi::kTVMFFIMap)
        .ok_or_else(|| Error::type_error("CUDA function table: the JSON must be an object"))?;
    let mut out: Vec<(String, FunctionInfo)> = Vec::new();
    for (key, value) in map::items(&obj)? {
        let key = text(key.view(), &|| "a kernel name".into())?;
        let at = |field: &str| format!("CUDA function table: {field} of kernel {key:?}");
        let info = value
            .view()
            .to_object()
            .filter(|o| o.type_index() == crate::abi::kTVMFFIMap)
            .ok_or_else(|| Error::type_error(at("the entry")))?;
        let field = |name: &str| -> Result<Option<Any>> {
            map::get(
                &info,
                crate::runtime::model::string::make_text(name.as_bytes(), TextKind::Str).view(),
            )
        };
        let name = field("name")?.ok_or_else(|| Error::value(at("\"name\"") + " is missing"))?;
        let name = text(name.view(), &|| at("\"name\""))?;
        let types =
            field("arg_types")?.ok_or_else(|| Error::value(at("\"arg_types\"") + " is missing"))?;
        let arg_types = list(&types, &|| at("\"arg_types\""))?
            .into_iter()
            .map(|t| dtype::from_string(text(t.view(), &|| at("an arg_types entry"))?.as_bytes()))
            .collect::<Result<Vec<DLDataType>>>()?;
        let tags = match field("launch_param_tags")? {
            Some(t) => Some(t),
            None => field("thread_axis_tags")?,
        };
        let launch_param_tags = match &tags {
            Some(t) => list(t, &|| at("\"launch_param_tags\""))?
                .into_iter()
                .map(|x| text(x.view(), &|| at("a launch_param_tags entry")))
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let extra = field("arg_extra_tags")?;
        let arg_extra_tags = match &extra {
            Some(e) => list(e, &|| at("\"arg_extra_tags\""))?
                .into_iter()
                .map(|x| {
                    x.view()
                        .as_i64()
                        .and_then(|i| i32::try_from(i).ok())
                        .ok_or_else(|| {
                            Error::type_error(at("an arg_extra_tags entry") + " must be an int")
                        })
                })
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        out.push((
            key,
            FunctionInfo {
                name,
                arg_types,
                launch_param_tags,
                arg_extra_tags,
            },
        ));
    }
    // The binary reader checks tags and types: one set of rules.
    let probe = CudaBlob {
        fmt: String::new(),
        functions: out,
        code: Vec::new(),
    };
    Ok(cuda_blob::decode(&cuda_blob::encode(&probe))?.functions)
}

/// The blob of each `codegen_id` among CUDA `artifacts`, in id order.
pub(crate) fn blobs(artifacts: &[Artifact]) -> Result<Vec<(String, CudaBlob)>> {
    let mut groups: BTreeMap<&str, Vec<&Artifact>> = BTreeMap::new();
    for a in artifacts.iter().filter(|a| a.loader() == CUDA_LOADER) {
        groups.entry(a.codegen_id()).or_default().push(a);
    }
    let mut out = Vec::new();
    for (id, group) in groups {
        let pick = |pred: &dyn Fn(&str) -> bool, what: &str| -> Result<Option<&Artifact>> {
            let found: Vec<&&Artifact> = group
                .iter()
                .filter(|a| pred(a.format().as_deref().unwrap_or("")))
                .collect();
            if found.len() > 1 {
                return Err(Error::value(format!(
                    "CUDA artifacts of codegen_id {id:?}: more than one {what} ({})",
                    found
                        .iter()
                        .map(|a| a.file_name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            Ok(found.first().map(|a| **a))
        };
        let code = pick(
            &|f| CODE_FORMATS.contains(&f),
            "code artifact (format ptx, cubin, fatbin or cuda)",
        )?
        .ok_or_else(|| {
            Error::value(format!(
                "CUDA artifacts of codegen_id {id:?}: no code artifact (format ptx, cubin, \
                     fatbin or cuda)"
            ))
        })?;
        let table = pick(&|f| f == TABLE_FORMAT, "function table")?.ok_or_else(|| {
            Error::value(format!(
                "CUDA artifacts of codegen_id {id:?}: no function table (format {TABLE_FORMAT})"
            ))
        })?;
        let label = match pick(&|f| f == FORMAT_FORMAT, "format artifact")? {
            Some(f) => String::from_utf8_lossy(f.content()).trim().to_owned(),
            None => code.format().unwrap_or_default(),
        };
        if let Some(other) = group.iter().find(|a| {
            let f = a.format().unwrap_or_default();
            !CODE_FORMATS.contains(&f.as_str()) && f != TABLE_FORMAT && f != FORMAT_FORMAT
        }) {
            return Err(Error::value(format!(
                "CUDA artifact {id}/{}: format {:?} is none of ptx, cubin, fatbin, cuda, \
                 {FORMAT_FORMAT} or {TABLE_FORMAT}",
                other.file_name(),
                other.format().unwrap_or_default()
            )));
        }
        out.push((
            id.to_owned(),
            CudaBlob {
                fmt: label,
                functions: table_from_json(table.content())
                    .map_err(|e| e.rewrap(|m| format!("{id}/{}: {m}", table.file_name())))?,
                code: code.content().to_vec(),
            },
        ));
    }
    Ok(out)
}

/// The three artifacts of a serialized CUDA module (what TVM embeds).
pub fn artifacts_of_blob(codegen_id: &str, bytes: &[u8]) -> Result<Vec<Artifact>> {
    let blob = cuda_blob::decode(bytes)?;
    let code_format = device_code::sniff(&blob.code)?.name();
    let ext = match code_format {
        "cuda" => "cu",
        f => f,
    };
    Ok(vec![
        Artifact::builder(codegen_id, CUDA_LOADER, &format!("kernels.{ext}"))
            .content(&blob.code)
            .format(code_format)
            .entry_functions(
                &blob
                    .functions
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .build()?,
        Artifact::builder(codegen_id, CUDA_LOADER, "format.txt")
            .content(blob.fmt.as_bytes())
            .format(FORMAT_FORMAT)
            .build()?,
        Artifact::builder(codegen_id, CUDA_LOADER, "function_table.json")
            .content(table_to_json(&blob.functions)?.as_bytes())
            .format(TABLE_FORMAT)
            .build()?,
    ])
}

/// Describes a CUDA artifact: a function table's kernels with the packed
/// call each expects, or the kernels device code declares.
pub(crate) fn describe(a: &Artifact) -> Result<String> {
    let mut out = String::new();
    if a.format().as_deref() == Some(TABLE_FORMAT) {
        for (_, info) in table_from_json(a.content())? {
            let _ = writeln!(out, "  kernel {}", info.signature()?);
        }
    } else if a
        .format()
        .is_some_and(|f| CODE_FORMATS.contains(&f.as_str()))
    {
        let listing = device_code::list(a.content())?;
        for k in &listing.kernels {
            let kind = match k.kind {
                device_code::SymbolKind::Entry => "entry",
                device_code::SymbolKind::DeviceFunction => "device function (.func)",
            };
            let params = k
                .param_sizes
                .as_ref()
                .map_or("parameters unknown".to_owned(), |p| {
                    format!("parameters {p:?} bytes")
                });
            let _ = writeln!(
                out,
                "  {} {}: {kind}, {params}",
                device_code::sniff(a.content())?.name(),
                k.name
            );
        }
        for n in &listing.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    Ok(out)
}

/// The CUDA kernels of `artifacts`, per `codegen_id`: each kernel's
/// signature, cross-checked against the code (the seed's
/// `inspect_cuda_print-signatures`); a group that cannot be read gives one
/// line saying why.
pub fn describe_kernels(artifacts: &[Artifact]) -> Vec<(String, Vec<String>)> {
    let mut ids: Vec<&str> = artifacts
        .iter()
        .filter(|a| a.loader() == CUDA_LOADER)
        .map(|a| a.codegen_id())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    match blobs(artifacts) {
        Ok(groups) => groups
            .into_iter()
            .map(|(id, blob)| {
                (
                    id,
                    device_code::describe_cuda_blob(&cuda_blob::encode(&blob)),
                )
            })
            .collect(),
        Err(e) if !ids.is_empty() => vec![(ids.join(", "), vec![format!("unreadable: {e}")])],
        Err(_) => Vec::new(),
    }
}

/// `ffi.Artifact.loader.cuda`: a module per `codegen_id`, the first
/// importing the others.
pub fn load(artifacts: &[Artifact]) -> Result<Module> {
    first_importing_rest(
        blobs(artifacts)?
            .into_iter()
            .map(|(_, blob)| Module::new(CudaModule::new(blob)?)),
        "ffi.Artifact.loader.cuda",
    )
}

/// Registers `ffi.Artifact.loader.cuda` and `ffi.CUDAModuleToArtifacts`.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.Artifact.loader.cuda",
        |artifacts: Obj<'_, ArrayT>| -> Owned<ModuleT> {
            let items = artifacts_of_array(&artifacts, "ffi.Artifact.loader.cuda")?;
            Ok(Owned::new(load(&items)?.into_object()))
        }
    });
    g.add(typed_fn! {
        "ffi.CUDAModuleToArtifacts",
        |codegen_id: Str<'_>, blob: BytesArg<'_>| -> Owned<ArrayT> {
            let codegen_id = String::from_utf8_lossy(codegen_id.0);
            Ok(array_of_artifacts(artifacts_of_blob(&codegen_id, blob.0)?))
        }
    });
}
