//! `ffi.ArtifactInspect`: a human-readable description of an artifact. A
//! registered `ffi.Artifact.inspect.<format>` (`(ffi.Artifact) -> str`)
//! describes its format; built in are JSON (pretty-printed), ELF objects,
//! shared libraries and CUDA cubins (their symbols, read with `object`),
//! CUDA artifacts (each kernel's signature from the function table, the
//! kernels device code declares),
//! constants (`params`: each tensor's name, dtype, shape and place), and for
//! anything else the size and SHA-256.
#![forbid(unsafe_code)]

use crate::module::artifact::export::{is_tarball, set_in};
use crate::module::artifact::set::ArtifactSet;
use crate::module::artifact::set::{Artifact, ArtifactT};
use crate::module::artifact::{cuda, params, triton};
use crate::module::format::inspect::{ModuleSummary, map_file};
use crate::module::format::library_bin;
use crate::runtime::call::registry::{self, Globals};
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{Obj, Str, StrRet};
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text, str_bytes_of};
use crate::runtime::value::dtype;
use crate::runtime::value::{json, seq};
use object::{Object, ObjectSymbol};
use std::fmt::Write as _;

/// Custom inspectors are globals named this prefix plus the format.
pub(crate) const INSPECT_PREFIX: &str = "ffi.Artifact.inspect.";

/// The one-line summary that starts every description (and that
/// `tvm-ffi-inspect` lists).
pub fn summary(a: &Artifact) -> String {
    format!(
        "{}/{}: loader {}, format {}, {} bytes, sha256 {}\n",
        a.codegen_id(),
        a.file_name(),
        a.loader(),
        a.format().as_deref().unwrap_or("(none)"),
        a.content().len(),
        a.sha256()
    )
}

/// The defined symbols of an ELF (or other object-format) file, or None if
/// the content is not one.
fn symbols(content: &[u8]) -> Option<String> {
    let file = object::File::parse(content).ok()?;
    let mut rows: Vec<(String, String, u64)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.is_definition() && !s.name().unwrap_or("").is_empty())
        .map(|s| {
            (
                s.name().unwrap_or("").to_owned(),
                format!("{:?}", s.kind()).to_lowercase(),
                s.size(),
            )
        })
        .collect();
    rows.sort();
    rows.dedup();
    let mut out = format!(
        "{:?} {:?} file, {} symbols\n",
        file.format(),
        file.kind(),
        rows.len()
    );
    for (name, kind, size) in rows {
        let _ = writeln!(out, "  {name} ({kind}, {size} bytes)");
    }
    Some(out)
}

/// The tensors a constants artifact holds, one line each.
fn constants(content: &[u8]) -> Result<String> {
    let entries = params::decode(content)?;
    let mut out = format!("{} tensors\n", entries.len());
    for e in entries {
        let shape: Vec<String> = e.shape.iter().map(i64::to_string).collect();
        let _ = writeln!(
            out,
            "  {}: {}[{}], {} bytes at offset {}",
            e.name,
            dtype::to_string(e.dtype)?,
            shape.join(", "),
            e.size,
            e.offset
        );
    }
    Ok(out)
}

/// Describes `a` (see the module docs).
pub(crate) fn inspect(a: &Artifact) -> Result<String> {
    let format = a.format().unwrap_or_default();
    if !format.is_empty() {
        let name = format!("{INSPECT_PREFIX}{format}");
        if let Some(f) = registry::get_global(name.as_bytes()) {
            let out = f.call(&[Any::from(a.as_object().clone()).view()])?;
            return str_bytes_of(out.view(), TextKind::Str)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .ok_or_else(|| Error::type_error(format!("`{name}` must return a str")));
        }
    }
    let mut out = summary(a);
    if format == "json" {
        let value = json::parse(a.content())
            .map_err(|e| e.rewrap(|m| format!("artifact {}: {m}", a.file_name())))?;
        out += &json::stringify_readable(value.view(), 2)?;
        out.push('\n');
    } else if format == "params" {
        out += &constants(a.content())?;
    } else if a.loader() == cuda::CUDA_LOADER {
        out += &cuda::describe(a)?;
    } else if a.loader() == triton::TRITON_LOADER && a.format().as_deref() != Some("cubin") {
        out += &triton::describe(a)?;
    } else if let Some(listing) = symbols(a.content()) {
        out += &listing;
    }
    Ok(out)
}

/// The kernels of a set's device artifacts, each group described and
/// checked against its code: `(kind, codegen_id, lines)`, the CUDA groups
/// first, then the Triton ones.
pub fn kernels_of(artifacts: &[Artifact]) -> Vec<(&'static str, String, Vec<String>)> {
    let cuda = cuda::describe_kernels(artifacts)
        .into_iter()
        .map(|(id, l)| ("CUDA", id, l));
    let triton = triton::describe_kernels(artifacts)
        .into_iter()
        .map(|(id, l)| ("Triton", id, l));
    cuda.chain(triton).collect()
}

/// `ffi.InspectFile(path)`: `[functions, tree]` of a shared library,
/// object file or Model Library Format tarball, read without loading it:
/// its `__tvm_ffi_<name>` functions and its module tree (see
/// `ffi.LibraryBinInspect`; None without one). The artifact set's row
/// (`ffi.ArtifactSet`; a tarball is that row alone) gains a fourth element
/// when the set holds device kernels: the lines `tvm-ffi-inspect` prints
/// for them. Regular files only, mapped: the file's length bounds what is
/// read, and a FIFO or a device is refused rather than read forever.
fn inspect_file(path: &std::path::Path) -> Result<Any> {
    let data = map_file(path)?;
    let kernel_lines = |set: Option<ArtifactSet>| -> Vec<String> {
        let Some(set) = set else { return Vec::new() };
        kernels_of(&set.artifacts())
            .into_iter()
            .flat_map(|(kind, id, lines)| {
                std::iter::once(format!("{kind} kernels of {id}:"))
                    .chain(lines.into_iter().map(|l| format!("  {l}")))
            })
            .collect()
    };
    let (functions, modules) = if is_tarball(&data) {
        let row = ModuleSummary {
            kind: library_bin::SET_RECORD_KIND.to_owned(),
            size: data.len(),
            imports: Vec::new(),
            detail: kernel_lines(set_in(&data)?),
        };
        (Vec::new(), Some(vec![row]))
    } else {
        let mut found = crate::module::format::inspect::inspect(&data)?;
        if let Some(row) = found.library_bin.as_mut().and_then(|rows| {
            rows.iter_mut()
                .find(|m| m.kind == library_bin::SET_RECORD_KIND)
        }) {
            row.detail = kernel_lines(set_in(&data)?);
        }
        (found.functions, found.library_bin)
    };
    let functions = functions
        .iter()
        .map(|f| make_text(f.as_bytes(), TextKind::Str))
        .collect();
    Ok(Any::from(seq::new_array(vec![
        Any::from(seq::new_array(functions)),
        modules
            .as_deref()
            .map_or(Any::NONE, crate::module::load::globals::describe_tree),
    ])))
}

/// Registers `ffi.ArtifactInspect` and `ffi.InspectFile`.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.add(typed_fn!("ffi.InspectFile", |path: Str<'_>| -> Any {
        inspect_file(&crate::platform::os::path_from_bytes(path.0))
    }));
    g.add(typed_fn! {
        "ffi.ArtifactInspect",
        |artifact: Obj<'_, ArtifactT>| -> StrRet {
            let a = Artifact::from_object((*artifact).clone())?;
            Ok(StrRet(inspect(&a)?.into_bytes()))
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::DLDataType;

    #[test]
    fn json_objects_and_raw_bytes() {
        let j = Artifact::builder("g", "graph", "g.json")
            .content(br#"{"a":[1,2]}"#)
            .format("json")
            .build()
            .unwrap();
        let text = inspect(&j).unwrap();
        assert!(
            text.starts_with("g/g.json: loader graph, format json, 11 bytes, sha256 "),
            "{text}"
        );
        assert!(
            text.ends_with("{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"),
            "{text}"
        );
        let obj = crate::module::load::emit::to_object_file(&[1, 2, 3]).unwrap();
        let o = Artifact::builder("c", "native", "lib.o")
            .content(&obj)
            .format("o")
            .build()
            .unwrap();
        let text = inspect(&o).unwrap();
        assert!(text.contains("__tvm_ffi__library_bin (data, "), "{text}");
        let f32 = DLDataType {
            code: 2,
            bits: 32,
            lanes: 1,
        };
        let p = Artifact::builder("c", "constants", "w.params")
            .content(&params::encode(&[("w", f32, &[2, 3], &[0; 24])]).unwrap())
            .format("params")
            .build()
            .unwrap();
        let text = inspect(&p).unwrap();
        assert!(
            text.ends_with("\n1 tensors\n  w: float32[2, 3], 24 bytes at offset 64\n"),
            "{text}"
        );
        let raw = Artifact::builder("c", "x", "blob")
            .content(b"abc")
            .build()
            .unwrap();
        assert_eq!(inspect(&raw).unwrap().lines().count(), 1);
    }

    #[test]
    fn deep_json_costs_what_it_weighs() {
        // 80 KB of nesting: indenting every level took over 2 GiB; the
        // first 64 levels are indented, the rest compact.
        let depth = 40_000;
        let doc = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let j = Artifact::builder("g", "graph", "deep.json")
            .content(doc.as_bytes())
            .format("json")
            .build()
            .unwrap();
        let text = inspect(&j).unwrap();
        assert!(text.len() < 10 * doc.len(), "{} bytes", text.len());
        assert!(text.contains(&"[".repeat(100)));
        assert!(text.contains("\n  ["));
    }
}
