//! The artifact set record: an `ffi.ArtifactSet` as bytes, the payload of
//! the `ffi.ArtifactSet` module entry in an exported library's
//! `__tvm_ffi__library_bin`.
//!
//! Version 1. Integers are little-endian; offsets count from the start of
//! the record.
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `TVMFFIAS` |
//! | 4 | record version (`u32`, 1) |
//! | 4 | zero |
//! | 8 | length `n` of the JSON header (`u64`) |
//! | `n` | the JSON header (UTF-8) |
//! | … | the contents, each at its offset, none overlapping another, zero padding between |
//!
//! The JSON header is `{"metadata": {...}, "artifacts": [{"codegen_id",
//! "loader", "file_name", "metadata", "offset", "size"}, ...]}`; metadata
//! values must be JSON values (str, int, float, bool, None, arrays and maps
//! of them). Every content starts at a multiple of [`CONTENT_ALIGNMENT`], so
//! constants stay aligned inside a loaded library.
//!
//! Reading a record back from a file re-creates each artifact, which
//! recomputes its SHA-256 and refuses a content that does not match the
//! recorded one; reading it from a loaded library image keeps the recorded
//! digests (see [`decode_in_image`]).
#![forbid(unsafe_code)]

use crate::abi::{kTVMFFIArray, kTVMFFIInt, kTVMFFIMap};
use crate::module::artifact::set::{ArtifactSet, Digest, make_artifact};
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, make_text, static_bytes, str_bytes_of};
use crate::runtime::{value::json, value::map, value::seq};

/// The magic bytes that start a record.
pub const MAGIC: &[u8; 8] = b"TVMFFIAS";
/// The record version this library writes and reads.
pub const VERSION: u32 = 1;
/// Alignment of every content, relative to the start of the record.
pub const CONTENT_ALIGNMENT: usize = 64;

/// A str value.
fn text(s: &str) -> Any {
    make_text(s.as_bytes(), TextKind::Str)
}

/// Serializes `set`.
pub fn encode(set: &ArtifactSet) -> Result<Vec<u8>> {
    let artifacts = set.artifacts();
    let mut offset = 0usize;
    let mut entries = Vec::with_capacity(artifacts.len());
    let mut placed = Vec::with_capacity(artifacts.len());
    for a in &artifacts {
        offset = offset.next_multiple_of(CONTENT_ALIGNMENT);
        placed.push(offset);
        let pairs = [
            (text("codegen_id"), text(a.codegen_id())),
            (text("loader"), text(a.loader())),
            (text("file_name"), text(a.file_name())),
            (text("metadata"), Any::from(a.metadata().clone())),
            (text("offset"), Any::from(offset as i64)),
            (text("size"), Any::from(a.content().len() as i64)),
        ];
        entries.push(Any::from(map::new_map(kTVMFFIMap, pairs)?));
        offset += a.content().len();
    }
    let header = map::new_map(
        kTVMFFIMap,
        [
            (text("metadata"), Any::from(set.metadata().clone())),
            (text("artifacts"), Any::from(seq::new_array(entries))),
        ],
    )?;
    let json = json::stringify(Any::from(header).view(), 0)
        .map_err(|e| e.rewrap(|m| format!("the artifact set's metadata is not JSON: {m}")))?;
    let start = (24 + json.len()).next_multiple_of(CONTENT_ALIGNMENT);
    let mut out = Vec::with_capacity(start + offset);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    for (a, at) in artifacts.iter().zip(placed) {
        out.resize(start + at, 0);
        out.extend_from_slice(a.content());
    }
    Ok(out)
}

/// The error for a malformed record.
fn malformed(what: impl std::fmt::Display) -> Error {
    Error::value(format!("malformed artifact set record: {what}"))
}

/// The value of `key` in a JSON map.
fn field(m: &Any, key: &str) -> Result<Any> {
    let obj = m
        .view()
        .to_object()
        .filter(|o| o.type_index() == kTVMFFIMap)
        .ok_or_else(|| malformed("an entry is not a map"))?;
    map::get(&obj, text(key).view())?.ok_or_else(|| malformed(format!("an entry has no \"{key}\"")))
}

/// A str field.
fn str_field(m: &Any, key: &str) -> Result<String> {
    let v = field(m, key)?;
    let bytes = str_bytes_of(v.view(), TextKind::Str)
        .ok_or_else(|| malformed(format!("\"{key}\" is not a str")))?;
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed(format!("\"{key}\" is not UTF-8")))
}

/// A non-negative int field.
fn size_field(m: &Any, key: &str) -> Result<usize> {
    let v = field(m, key)?;
    v.view()
        .as_i64()
        .filter(|_| v.type_index() == kTVMFFIInt)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| malformed(format!("\"{key}\" is not a non-negative int")))
}

/// Reads a record held in a library image this process loaded (mapped for
/// good, and trusted: its code runs). Contents are referenced in place and
/// the recorded SHA-256s kept, so nothing is copied or hashed and large
/// constants are not even paged in. Offsets and the ABI handshake are
/// checked.
pub fn decode_in_image(bytes: &'static [u8]) -> Result<ArtifactSet> {
    decode_with(bytes, Digest::TrustRecorded, static_bytes)
}

/// Reads a record back into a set: contents are copied, and every offset,
/// every SHA-256 and the ABI handshake are checked.
pub fn decode(bytes: &[u8]) -> Result<ArtifactSet> {
    decode_with(bytes, Digest::Verify, |slice| {
        make_text(slice, TextKind::Bytes)
    })
}

/// One artifact of a record: its names, where its content lies, its
/// metadata.
struct Entry {
    names: [String; 3],
    range: core::ops::Range<usize>,
    metadata: Option<ObjectRef>,
}

/// Reads a record's header and checks where every content lies; returns
/// the set metadata and the entries.
fn layout(bytes: &[u8]) -> Result<(Option<ObjectRef>, Vec<Entry>)> {
    if bytes.len() < 24 || &bytes[..8] != MAGIC {
        return Err(malformed("bad magic"));
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    if word(8) != VERSION {
        return Err(malformed(format!(
            "record version {}; this library reads version {VERSION}",
            word(8)
        )));
    }
    let json_len = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let json_end = usize::try_from(json_len)
        .ok()
        .and_then(|n| n.checked_add(24))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| malformed(format!("a JSON header of {json_len} bytes does not fit")))?;
    let header = json::parse(&bytes[24..json_end])
        .map_err(|e| e.rewrap(|m| format!("malformed artifact set record: {m}")))?;
    let start = json_end.next_multiple_of(CONTENT_ALIGNMENT);
    let list = field(&header, "artifacts")?;
    let list = list
        .view()
        .to_object()
        .filter(|o| o.type_index() == kTVMFFIArray)
        .ok_or_else(|| malformed("\"artifacts\" is not an array"))?;
    let mut entries = Vec::new();
    for entry in seq::views(&list, kTVMFFIArray)? {
        let entry = entry.to_owned_any()?;
        let (offset, size) = (size_field(&entry, "offset")?, size_field(&entry, "size")?);
        let range = start
            .checked_add(offset)
            .and_then(|b| Some(b..b.checked_add(size)?))
            .filter(|r| r.end <= bytes.len())
            .ok_or_else(|| {
                malformed(format!(
                    "a content (offset {offset}, {size} bytes) lies beyond the end"
                ))
            })?;
        entries.push(Entry {
            names: [
                str_field(&entry, "codegen_id")?,
                str_field(&entry, "loader")?,
                str_field(&entry, "file_name")?,
            ],
            range,
            metadata: field(&entry, "metadata")?.view().to_object(),
        });
    }
    check_disjoint(&entries)?;
    Ok((field(&header, "metadata")?.view().to_object(), entries))
}

/// Refuses contents that overlap: the writer lays each one out apart, and
/// overlapping ranges would make reading (copying, hashing) cost the
/// record's size once per artifact instead of once in all.
fn check_disjoint(entries: &[Entry]) -> Result<()> {
    let mut order: Vec<&Entry> = entries.iter().filter(|e| !e.range.is_empty()).collect();
    order.sort_unstable_by_key(|e| e.range.start);
    match order.windows(2).find(|w| w[0].range.end > w[1].range.start) {
        None => Ok(()),
        Some(w) => Err(malformed(format!(
            "the contents of {}/{} (bytes {:?}) and {}/{} (bytes {:?}) overlap",
            w[0].names[0], w[0].names[2], w[0].range, w[1].names[0], w[1].names[2], w[1].range
        ))),
    }
}

/// Where each artifact's content lies in a record, by `(codegen_id,
/// loader, file_name)`, in record order.
pub(crate) fn content_ranges(bytes: &[u8]) -> Result<Vec<([String; 3], core::ops::Range<usize>)>> {
    Ok(layout(bytes)?
        .1
        .into_iter()
        .map(|e| (e.names, e.range))
        .collect())
}

/// The reader behind both: each artifact made from its names, its content
/// (`content` of its slice) and its metadata, its digest as `digest` says.
fn decode_with<'a>(
    bytes: &'a [u8],
    digest: Digest,
    content: impl Fn(&'a [u8]) -> Any,
) -> Result<ArtifactSet> {
    let (metadata, entries) = layout(bytes)?;
    let artifacts = entries
        .into_iter()
        .map(|e| {
            make_artifact(
                e.names.each_ref().map(|n| n.as_bytes()),
                content(&bytes[e.range]),
                e.metadata.as_ref(),
                digest,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let set = ArtifactSet::new(artifacts, metadata.as_ref())?;
    set.check_abi()?;
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::artifact::set::Artifact;

    fn record_with(file_name: &str) -> Vec<u8> {
        let a = Artifact::builder("c", "native", "lib0.c")
            .content(b"int x;")
            .format("c")
            .build()
            .unwrap();
        let set = ArtifactSet::new(vec![a], None).unwrap();
        let good = encode(&set).unwrap();
        // Rewrite the name inside the JSON header (same length keeps offsets).
        let text =
            String::from_utf8_lossy(&good).replace("\"lib0.c\"", &format!("\"{file_name}\""));
        text.into_bytes()
    }

    #[test]
    fn round_trip_and_hostile_records() {
        let good = record_with("lib0.c");
        let set = decode(&good).unwrap();
        assert_eq!(set.artifacts()[0].content(), b"int x;");
        // Path tricks in a recorded name are refused, naming the field.
        for bad in ["../x.c", "/etc/x", "a/bc.c"] {
            let err = decode(&record_with(bad)).unwrap_err().to_string();
            assert!(err.contains("`file_name`"), "{bad}: {err}");
        }
        // A changed content no longer matches its recorded digest.
        let mut tampered = good.clone();
        let at = tampered.len() - 1;
        tampered[at] ^= 1;
        assert!(
            decode(&tampered)
                .unwrap_err()
                .to_string()
                .contains("SHA-256")
        );
        // Every truncation is an error, never a read past the end.
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn contents_do_not_overlap() {
        let entry = |name: &str, range: core::ops::Range<usize>| Entry {
            names: ["c".into(), "native".into(), name.into()],
            range,
            metadata: None,
        };
        assert!(
            check_disjoint(&[entry("a", 64..128), entry("b", 128..192), entry("e", 5..5)]).is_ok()
        );
        let err = check_disjoint(&[entry("a", 64..4096), entry("b", 128..192)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("c/a (bytes 64..4096) and c/b (bytes 128..192) overlap"),
            "{err}"
        );
    }
}
