//! Model Library Format: an artifact set as an uncompressed tarball in the
//! layout of the Model Library Format document (seed 001), readable by
//! plain `tar`, and read back into the same set.
//!
//! Layout (`<target_key>` is an artifact's `metadata["target_key"]`, else
//! its `codegen_id`):
//!
//! - `metadata.json`: the document's keys (`version` 5, `model_name`,
//!   `export_datetime`, `executors`, `target`, `memory`) plus
//!   `tvm_ffi_abi`, `artifact_set` (the set's metadata) and `artifacts`, one
//!   record per artifact: `codegen_id`, `loader`, `file_name`, `path` (in
//!   the tarball), `format`, `sha256`, `metadata`;
//! - `codegen/<target_key>/src/<file_name>`: C sources (format `c`);
//! - `codegen/<target_key>/lib/<file_name>`: host objects (format `o`);
//! - `parameters/<model_name>.params`: the constants, when there is one
//!   constants artifact; with several, `parameters/<file_name>` each;
//! - `codegen/<target_key>/<file_name>`: every other artifact.
//!
//! Reading never writes to disk: the tarball is read in memory. A symbolic
//! or hard link, a device or FIFO entry, an absolute path or one with `..`,
//! a duplicate path, and a truncated or oversized entry are each a
//! ValueError; every artifact's SHA-256 is checked, and so is the ABI
//! handshake.
#![forbid(unsafe_code)]

use crate::abi::{kTVMFFIArray, kTVMFFIMap};
use crate::module::artifact::set::{Artifact, ArtifactSet, CONSTANTS_LOADER};
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text, str_bytes_of};
use crate::runtime::{value::json, value::map, value::seq};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path};

/// The Model Library Format version whose layout this follows.
pub const MLF_VERSION: i64 = 5;

/// A str value.
fn text(s: &str) -> Any {
    make_text(s.as_bytes(), TextKind::Str)
}

/// The tarball path of each artifact.
fn paths(set: &ArtifactSet) -> Result<Vec<String>> {
    let artifacts = set.artifacts();
    let constants = artifacts
        .iter()
        .filter(|a| a.loader() == CONSTANTS_LOADER)
        .count();
    let mut seen = BTreeMap::new();
    let mut out = Vec::with_capacity(artifacts.len());
    for a in &artifacts {
        let key = a
            .meta_str("target_key")
            .unwrap_or_else(|| a.codegen_id().to_owned());
        crate::module::artifact::set::check_file_name("metadata[\"target_key\"]", key.as_bytes())?;
        let path = match (a.loader(), a.format().as_deref()) {
            (CONSTANTS_LOADER, _) if constants == 1 => {
                format!("parameters/{}.params", set.model_name())
            }
            (CONSTANTS_LOADER, _) => format!("parameters/{}", a.file_name()),
            (_, Some("c")) => format!("codegen/{key}/src/{}", a.file_name()),
            (_, Some("o")) => format!("codegen/{key}/lib/{}", a.file_name()),
            _ => format!("codegen/{key}/{}", a.file_name()),
        };
        if let Some(other) = seen.insert(path.clone(), a.file_name().to_owned()) {
            return Err(Error::value(format!(
                "artifacts \"{other}\" and \"{}\" would both be stored at {path}",
                a.file_name()
            )));
        }
        out.push(path);
    }
    Ok(out)
}

/// `export_datetime` in the document's format (`%Y-%m-%d %H:%M:%SZ`).
fn export_datetime(created: &str) -> String {
    created.replacen('T', " ", 1)
}

/// The tarball of `set`.
pub fn export(set: &ArtifactSet) -> Result<Vec<u8>> {
    let artifacts = set.artifacts();
    let paths = paths(set)?;
    let records: Vec<Any> = artifacts
        .iter()
        .zip(&paths)
        .map(|(a, path)| {
            let pairs = [
                (text("codegen_id"), text(a.codegen_id())),
                (text("loader"), text(a.loader())),
                (text("file_name"), text(a.file_name())),
                (text("path"), text(path)),
                (text("format"), text(&a.format().unwrap_or_default())),
                (text("sha256"), text(&a.sha256())),
                (text("metadata"), Any::from(a.metadata().clone())),
            ];
            map::new_map(kTVMFFIMap, pairs).map(Any::from)
        })
        .collect::<Result<_>>()?;
    let created = set.meta_str("created").unwrap_or_default();
    // The distinct targets in first-seen order (a set, not a search per
    // artifact: linear in the number of artifacts).
    let mut seen = std::collections::HashSet::new();
    let mut targets = Vec::new();
    for a in &artifacts {
        if let Some(t) = a.meta_str("target")
            && seen.insert(t.clone())
        {
            targets.push(t);
        }
    }
    let empty_map = || map::new_map(kTVMFFIMap, Vec::new()).map(Any::from);
    let memory = map::new_map(
        kTVMFFIMap,
        [
            (text("main"), Any::from(seq::new_array(Vec::new()))),
            (text("operator_functions"), empty_map()?),
        ],
    )?;
    let target = map::new_map(
        kTVMFFIMap,
        targets
            .iter()
            .enumerate()
            .map(|(i, t)| (text(&i.to_string()), text(t))),
    )?;
    let metadata = map::new_map(
        kTVMFFIMap,
        [
            (text("version"), Any::from(MLF_VERSION)),
            (text("model_name"), text(&set.model_name())),
            (text("export_datetime"), text(&export_datetime(&created))),
            (text("executors"), Any::from(seq::new_array(Vec::new()))),
            (text("target"), Any::from(target)),
            (text("memory"), Any::from(memory)),
            (
                text("tvm_ffi_abi"),
                text(&set.meta_str("tvm_ffi_abi").unwrap_or_default()),
            ),
            (text("artifact_set"), Any::from(set.metadata().clone())),
            (text("artifacts"), Any::from(seq::new_array(records))),
        ],
    )?;
    let json = json::stringify(Any::from(metadata).view(), 2)
        .map_err(|e| e.rewrap(|m| format!("the artifact set's metadata is not JSON: {m}")))?;
    let mut tar = tar::Builder::new(Vec::new());
    let io = |e: std::io::Error| Error::runtime(format!("cannot write the tarball: {e}"));
    let mut add = |path: &str, data: &[u8]| -> Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, path, data).map_err(io)
    };
    add("metadata.json", json.as_bytes())?;
    for (a, path) in artifacts.iter().zip(&paths) {
        add(path, a.content())?;
    }
    tar.into_inner().map_err(io)
}

/// The error for a bad tarball.
fn bad(what: impl std::fmt::Display) -> Error {
    Error::value(format!("malformed Model Library Format tarball: {what}"))
}

/// Checks an entry path: relative, without `..`; returns it normalised.
fn entry_path(raw: &[u8]) -> Result<String> {
    let shown = || String::from_utf8_lossy(raw).into_owned();
    let text = core::str::from_utf8(raw)
        .map_err(|_| bad(format!("entry path {} is not UTF-8", shown())))?;
    let mut parts = Vec::new();
    for c in Path::new(text).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str().unwrap_or_default()),
            Component::CurDir => {}
            _ => {
                return Err(bad(format!(
                    "entry path {} is absolute or leaves the archive",
                    shown()
                )));
            }
        }
    }
    Ok(parts.join("/"))
}

/// Reads every regular file of a tarball held in memory.
fn read_entries(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut archive = tar::Archive::new(bytes);
    let mut files = BTreeMap::new();
    let entries = archive.entries().map_err(bad)?;
    for entry in entries {
        let mut entry = entry.map_err(bad)?;
        let raw = entry.path_bytes().into_owned();
        let path = entry_path(&raw)?;
        match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => {}
            tar::EntryType::Directory => continue,
            other => {
                return Err(bad(format!(
                    "entry {path} is a {}, not a regular file",
                    match other {
                        tar::EntryType::Symlink => "symbolic link",
                        tar::EntryType::Link => "hard link",
                        tar::EntryType::Fifo => "FIFO",
                        tar::EntryType::Char | tar::EntryType::Block => "device",
                        _ => "special entry",
                    }
                )));
            }
        }
        let size = entry.size();
        if size > bytes.len() as u64 {
            return Err(bad(format!(
                "entry {path} declares {size} bytes, more than the whole tarball ({})",
                bytes.len()
            )));
        }
        let mut data = Vec::with_capacity(size as usize);
        entry
            .by_ref()
            .take(size)
            .read_to_end(&mut data)
            .map_err(|e| bad(format!("entry {path}: {e}")))?;
        if data.len() as u64 != size {
            return Err(bad(format!(
                "entry {path} is cut short ({} of {size} bytes)",
                data.len()
            )));
        }
        if files.insert(path.clone(), data).is_some() {
            return Err(bad(format!("entry {path} appears twice")));
        }
    }
    Ok(files)
}

/// A str field of a JSON map.
fn str_of(m: &Any, key: &str) -> Result<String> {
    let obj = m
        .view()
        .to_object()
        .filter(|o| o.type_index() == kTVMFFIMap)
        .ok_or_else(|| bad("an artifact record is not a map"))?;
    let v = map::get(&obj, text(key).view())?
        .ok_or_else(|| bad(format!("a record has no \"{key}\"")))?;
    str_bytes_of(v.view(), TextKind::Str)
        .and_then(|b| core::str::from_utf8(b).ok())
        .map(str::to_owned)
        .ok_or_else(|| bad(format!("\"{key}\" is not a str")))
}

/// A field of a JSON map, if present.
fn get(m: &Any, key: &str) -> Result<Option<Any>> {
    match m
        .view()
        .to_object()
        .filter(|o| o.type_index() == kTVMFFIMap)
    {
        Some(obj) => map::get(&obj, text(key).view()),
        None => Err(bad("metadata.json is not an object")),
    }
}

/// Reads a tarball back into the set it was exported from.
pub fn import(bytes: &[u8]) -> Result<ArtifactSet> {
    let files = read_entries(bytes)?;
    let meta_json = files
        .get("metadata.json")
        .ok_or_else(|| bad("no metadata.json"))?;
    let meta = json::parse(meta_json).map_err(|e| e.rewrap(|m| format!("metadata.json: {m}")))?;
    let records = get(&meta, "artifacts")?
        .and_then(|v| v.view().to_object())
        .filter(|o| o.type_index() == kTVMFFIArray)
        .ok_or_else(|| bad("metadata.json has no \"artifacts\" array"))?;
    let mut artifacts = Vec::new();
    // Each entry is one artifact's: a record naming an entry already taken
    // is refused, so reading costs the tarball's size once, not once per
    // record (each copies and hashes its bytes).
    let mut taken = std::collections::HashSet::new();
    for record in seq::views(&records, kTVMFFIArray)? {
        let record = record.to_owned_any()?;
        let path = str_of(&record, "path")?;
        let key = entry_path(path.as_bytes())?;
        let content = files.get(&key).ok_or_else(|| {
            bad(format!(
                "{path} is listed in metadata.json but not in the tarball"
            ))
        })?;
        if !taken.insert(key) {
            return Err(bad(format!("{path} is listed in metadata.json twice")));
        }
        let metadata = get(&record, "metadata")?.and_then(|v| v.view().to_object());
        artifacts.push(Artifact::new(
            &str_of(&record, "codegen_id")?,
            &str_of(&record, "loader")?,
            &str_of(&record, "file_name")?,
            make_text(content, TextKind::Bytes),
            metadata.as_ref(),
        )?);
    }
    let set_meta = get(&meta, "artifact_set")?.and_then(|v| v.view().to_object());
    let set = ArtifactSet::new(artifacts, set_meta.as_ref())?;
    set.check_abi()?;
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ArtifactSet {
        let c = Artifact::builder("host", "native", "lib0.c")
            .content(b"int x;")
            .format("c")
            .target("llvm")
            .build()
            .unwrap();
        let o = Artifact::builder("host", "native", "lib1.o")
            .content(b"\x7fELF...")
            .format("o")
            .build()
            .unwrap();
        let params = Artifact::builder("host", CONSTANTS_LOADER, "w.params")
            .content(b"TVMFFIPR")
            .format("params")
            .build()
            .unwrap();
        let cubin = Artifact::builder("cuda", "cuda", "k.cubin")
            .content(b"cubin")
            .meta_str("target_key", "gpu0")
            .build()
            .unwrap();
        ArtifactSet::new(vec![c, o, params, cubin], None).unwrap()
    }

    /// A tarball of `(path, type, data)` entries written with raw headers.
    fn tarball(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.as_mut_bytes()[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn layout_and_round_trip() {
        let set = sample();
        let tar = export(&set).unwrap();
        let files = read_entries(&tar).unwrap();
        assert_eq!(
            files.keys().map(String::as_str).collect::<Vec<_>>(),
            [
                "codegen/gpu0/k.cubin",
                "codegen/host/lib/lib1.o",
                "codegen/host/src/lib0.c",
                "metadata.json",
                "parameters/model.params"
            ]
        );
        let back = import(&tar).unwrap();
        let (a, b) = (set.artifacts(), back.artifacts());
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (
                    x.codegen_id(),
                    x.loader(),
                    x.file_name(),
                    x.content(),
                    x.sha256()
                ),
                (
                    y.codegen_id(),
                    y.loader(),
                    y.file_name(),
                    y.content(),
                    y.sha256()
                )
            );
        }
        assert_eq!(back.meta_str("created"), set.meta_str("created"));
    }

    #[test]
    fn hostile_tarballs_are_errors() {
        let meta: &[u8] = b"{\"artifacts\": []}";
        let cases: [(&str, Vec<u8>, &str); 6] = [
            (
                "symlink",
                tarball(&[("x", tar::EntryType::Symlink, b"")]),
                "symbolic link",
            ),
            (
                "hard link",
                tarball(&[("x", tar::EntryType::Link, b"")]),
                "hard link",
            ),
            (
                "parent",
                tarball(&[("../x", tar::EntryType::Regular, b"x")]),
                "leaves the archive",
            ),
            (
                "absolute",
                tarball(&[("/etc/x", tar::EntryType::Regular, b"x")]),
                "absolute",
            ),
            (
                "duplicate",
                tarball(&[
                    ("metadata.json", tar::EntryType::Regular, meta),
                    ("metadata.json", tar::EntryType::Regular, meta),
                ]),
                "appears twice",
            ),
            (
                "no metadata",
                tarball(&[("x", tar::EntryType::Regular, b"x")]),
                "no metadata.json",
            ),
        ];
        for (name, tar, want) in cases {
            let err = import(&tar).unwrap_err().to_string();
            assert!(
                err.starts_with("ValueError: ") && err.contains(want),
                "{name}: {err}"
            );
        }
        // Truncated and oversized: cut the archive inside an entry's data, and
        // declare a size larger than the archive.
        let good = export(&sample()).unwrap();
        for cut in [600, 1100, good.len() / 2] {
            let err = import(&good[..cut]).unwrap_err().to_string();
            assert!(err.starts_with("ValueError: "), "cut at {cut}: {err}");
        }
        let mut oversized = tarball(&[("metadata.json", tar::EntryType::Regular, meta)]);
        let mut h = tar::Header::new_gnu();
        h.as_mut_bytes().copy_from_slice(&oversized[..512]);
        h.set_size(1 << 40);
        h.set_cksum();
        oversized[..512].copy_from_slice(h.as_bytes());
        let err = import(&oversized).unwrap_err().to_string();
        assert!(err.contains("declares"), "{err}");
    }

    #[test]
    fn an_entry_is_one_artifact() {
        // Records naming the same entry would each copy and hash its bytes.
        let record =
            r#"{"path": "k/x.bin", "codegen_id": "k", "loader": "l", "file_name": "x.bin"}"#;
        let meta = format!(r#"{{"artifacts": [{record}, {record}]}}"#);
        let tar = tarball(&[
            ("metadata.json", tar::EntryType::Regular, meta.as_bytes()),
            ("k/x.bin", tar::EntryType::Regular, &[7u8; 4096]),
        ]);
        let err = import(&tar).unwrap_err().to_string();
        assert!(
            err.contains("k/x.bin is listed in metadata.json twice"),
            "{err}"
        );
    }
}
