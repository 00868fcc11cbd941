//! Artifacts: named, typed compiler outputs (`ffi.Artifact`) and the sets a
//! compiler hands over (`ffi.ArtifactSet`), as reflected object types whose
//! fields C, Python and Rust read through the ordinary reflection API.
//!
//! An artifact is immutable once made: its name is checked, its
//! `metadata["sha256"]` is computed from the content, and well-known
//! metadata keys have their documented types. A set checks that
//! `(codegen_id, file_name)` pairs are unique and fills the set metadata the
//! caller leaves out (`model_name`, `version`, `created`, `producer`,
//! `tvm_ffi_abi`).
//!
//! The two types are registered on first use, so a process that never
//! makes an artifact has the reference's type table exactly.
//!
//! ```
//! use tvm_ffi::module::artifact::set::{Artifact, ArtifactSet};
//! use tvm_ffi::module::artifact::{load, mlf};
//!
//! // A compiler's output: a kernel for the host and a graph for a custom
//! // loader, with names and metadata.
//! let kernel = Artifact::builder("host", "native", "kernel.c")
//!     .content(b"int answer(void) { return 42; }")
//!     .format("c")
//!     .entry_functions(&["answer"])
//!     .build()?;
//! let graph = Artifact::builder("npu", "npu_graph", "graph.json")
//!     .content(br#"{"nodes": []}"#)
//!     .format("json")
//!     .build()?;
//! let set = ArtifactSet::new(vec![kernel, graph], None)?;
//! assert_eq!(set.model_name(), "model");
//! assert_eq!(set.artifacts()[0].sha256().len(), 64);
//!
//! // On disk as Model Library Format, and back: the same set.
//! let back = mlf::import(&mlf::export(&set)?)?;
//! assert_eq!(back.artifacts()[1].content(), br#"{"nodes": []}"#);
//!
//! // Loading needs a loader for `npu_graph`: its absence is a clear error.
//! let err = load::load_set(&set).unwrap_err();
//! assert!(err.to_string().contains("ffi.Artifact.loader.npu_graph"));
//! # Ok::<(), tvm_ffi::runtime::Error>(())
//! ```
//!
//! One file for both types (about 950 lines): a set's checks are its
//! artifacts' (names, unique pairs, metadata types), made and reported once.

use crate::abi::*;
use crate::module::artifact::params;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{ArrayT, MapT, Obj, ObjType, Owned, Schema, Str};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{Cell, FrozenCell, ObjectRef, new_object};
use crate::runtime::model::string::{TextKind, make_text, str_bytes_of};
use crate::runtime::model::type_table::{Table, with_table};
use crate::runtime::reflect::field::Storage;
use crate::runtime::reflect::reflected::AnyField;
use crate::runtime::reflect::type_def::TypeDef;
use crate::runtime::{value::map, value::seq, value::tensor};
use core::mem::offset_of;
use std::sync::OnceLock;

/// The type key of artifacts.
pub(crate) const ARTIFACT_KEY: &str = "ffi.Artifact";
/// The type key of artifact sets.
pub(crate) const ARTIFACT_SET_KEY: &str = "ffi.ArtifactSet";
/// The version of the set format (`metadata["version"]`).
pub const SET_FORMAT_VERSION: i64 = 1;
/// The loader of constants artifacts.
pub const CONSTANTS_LOADER: &str = "constants";
/// The format of constants artifacts.
pub const CONSTANTS_FORMAT: &str = "params";

/// The fields of an `ffi.Artifact`.
#[repr(C)]
#[derive(Clone)]
struct ArtifactObj {
    codegen_id: AnyField,
    loader: AnyField,
    file_name: AnyField,
    content: AnyField,
    metadata: Option<ObjectRef>,
}

/// The fields of an `ffi.ArtifactSet`.
#[repr(C)]
#[derive(Clone)]
struct ArtifactSetObj {
    artifacts: Option<ObjectRef>,
    metadata: Option<ObjectRef>,
}

const _: () = {
    assert!(size_of::<ArtifactObj>() == 72);
    assert!(offset_of!(ArtifactObj, metadata) == 64);
    assert!(size_of::<ArtifactSetObj>() == 16);
};

// SAFETY: objects of the artifact type index are made only here (the type
// has no creator), with an `ArtifactObj` payload right after the header;
// their fields never change. The type is final (`__ffi_type_final__`), so
// the exact index is the check, as the reference checks final types: an
// artifact's invariants (checked names, its sha256) hold only for objects
// its constructors made.
unsafe impl Cell for ArtifactObj {
    fn holds(type_index: i32) -> bool {
        ArtifactT::accepts(type_index)
    }
}
// SAFETY: see `Cell`: immutable.
unsafe impl FrozenCell for ArtifactObj {}

// SAFETY: as for `ArtifactObj`, with an `ArtifactSetObj` payload.
unsafe impl Cell for ArtifactSetObj {
    fn holds(type_index: i32) -> bool {
        ArtifactSetT::accepts(type_index)
    }
}
// SAFETY: see `Cell`: immutable.
unsafe impl FrozenCell for ArtifactSetObj {}

/// The type indices of `ffi.Artifact` and `ffi.ArtifactSet`, once registered.
static TYPES: OnceLock<std::result::Result<(i32, i32), String>> = OnceLock::new();

/// The type indices, registering the types on first use.
fn types() -> Result<(i32, i32)> {
    TYPES
        .get_or_init(|| with_table(register_types).map_err(|e| e.to_string()))
        .clone()
        .map_err(Error::runtime)
}

/// The type indices if the types are registered (no registration).
fn registered() -> Option<(i32, i32)> {
    TYPES.get().and_then(|r| r.as_ref().ok().copied())
}

/// Registers both types and their fields.
fn register_types(t: &mut Table) -> Result<(i32, i32)> {
    const HEADER: i32 = size_of::<TVMFFIObject>() as i32;
    let mut a = TypeDef::fresh(t, ARTIFACT_KEY, kTVMFFIObject, 1)?;
    let str_field = |def: &mut TypeDef<'_>, name: &str, doc: &str, offset: usize| {
        def.field(name, doc, 0, Storage::Str, offset, kTVMFFIStr, Schema::STR);
    };
    a.metadata(None, HEADER + size_of::<ArtifactObj>() as i32, 0);
    str_field(
        &mut a,
        "codegen_id",
        "The codegen that produced the artifact.",
        offset_of!(ArtifactObj, codegen_id),
    );
    str_field(
        &mut a,
        "loader",
        "The loader that turns it into a module.",
        offset_of!(ArtifactObj, loader),
    );
    str_field(
        &mut a,
        "file_name",
        "Its file name, unique within its codegen.",
        offset_of!(ArtifactObj, file_name),
    );
    a.field(
        "content",
        "Its bytes.",
        0,
        Storage::Any,
        offset_of!(ArtifactObj, content),
        kTVMFFIBytes,
        Schema::BYTES,
    )
    .field(
        "metadata",
        "Target, format, entry functions, launch parameters, sha256, ...",
        0,
        Storage::Object,
        offset_of!(ArtifactObj, metadata),
        kTVMFFIMap,
        Schema::map_of(Schema::STR, Schema::ANY),
    )
    .final_(true);
    let artifact = a.index();
    let mut s = TypeDef::fresh(t, ARTIFACT_SET_KEY, kTVMFFIObject, 1)?;
    s.metadata(None, HEADER + size_of::<ArtifactSetObj>() as i32, 0)
        .field(
            "artifacts",
            "The artifacts, in the order given.",
            0,
            Storage::Object,
            offset_of!(ArtifactSetObj, artifacts),
            kTVMFFIArray,
            Schema::array_of(Schema::object(ARTIFACT_KEY)),
        )
        .field(
            "metadata",
            "model_name, version, created, producer, tvm_ffi_abi, ...",
            0,
            Storage::Object,
            offset_of!(ArtifactSetObj, metadata),
            kTVMFFIMap,
            Schema::map_of(Schema::STR, Schema::ANY),
        )
        .final_(true);
    Ok((artifact, s.index()))
}

/// `ffi.Artifact` in signatures.
pub(crate) struct ArtifactT;
impl ObjType for ArtifactT {
    fn schema() -> Schema {
        Schema::object(ARTIFACT_KEY)
    }
    fn accepts(type_index: i32) -> bool {
        registered().is_some_and(|(a, _)| a == type_index)
    }
}

/// `ffi.ArtifactSet` in signatures.
pub(crate) struct ArtifactSetT;
impl ObjType for ArtifactSetT {
    fn schema() -> Schema {
        Schema::object(ARTIFACT_SET_KEY)
    }
    fn accepts(type_index: i32) -> bool {
        registered().is_some_and(|(_, s)| s == type_index)
    }
}

/// Checks a `codegen_id` or `loader`: non-empty, `[A-Za-z0-9_.-]+`, and
/// not `.` or `..` (a codegen_id names a directory on extraction).
fn check_id(field: &str, value: &[u8]) -> Result<()> {
    let ok = !value.is_empty()
        && value != b"."
        && value != b".."
        && value
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::value(format!(
            "`{field}` must match [A-Za-z0-9_.-]+ and not be `.` or `..`, got \"{}\"",
            String::from_utf8_lossy(value).escape_debug()
        )))
    }
}

/// Checks a name used as one path component (`file_name`, `model_name`):
/// UTF-8, not empty, `.` or `..`, without `/`, `\` or NUL.
pub(crate) fn check_file_name(field: &str, value: &[u8]) -> Result<()> {
    let shown = || String::from_utf8_lossy(value).escape_debug().to_string();
    let why = if value.is_empty() {
        Some("is empty")
    } else if value == b"." || value == b".." {
        Some("is not a file name")
    } else if value.iter().any(|&b| matches!(b, b'/' | b'\\')) {
        Some("contains a path separator")
    } else if value.contains(&0) {
        Some("contains a NUL byte")
    } else if core::str::from_utf8(value).is_err() {
        Some("is not UTF-8")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Error::value(format!("`{field}` {why}: \"{}\"", shown()))),
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A str value's text, if it is one.
fn as_text(v: AnyView<'_>) -> Option<&str> {
    core::str::from_utf8(str_bytes_of(v, TextKind::Str)?).ok()
}

/// The type key of a value, for messages.
fn key_of(v: AnyView<'_>) -> String {
    crate::runtime::model::type_table::type_key_of(v.type_index())
}

/// The pairs of a `Map<str, Any>` argument named `field`.
fn str_map_items(field: &str, m: Option<&ObjectRef>) -> Result<Vec<(String, Any)>> {
    let Some(m) = m else { return Ok(Vec::new()) };
    map::items(m)?
        .into_iter()
        .map(|(k, v)| match as_text(k.view()) {
            Some(key) => Ok((key.to_owned(), v)),
            None => Err(Error::value(format!(
                "`{field}` keys must be str, got {}",
                key_of(k.view())
            ))),
        })
        .collect()
}

/// Checks the type of a well-known artifact metadata key.
fn check_artifact_meta(key: &str, v: AnyView<'_>) -> Result<()> {
    let want = match key {
        "target" | "target_key" | "format" | "sha256" => {
            if as_text(v).is_some() {
                return Ok(());
            }
            "a str"
        }
        "entry_functions" => {
            let ok = v.to_object().is_some_and(|a| {
                seq::views(&a, kTVMFFIArray)
                    .is_ok_and(|mut items| items.all(|i| as_text(i).is_some()))
            });
            if ok {
                return Ok(());
            }
            "an Array<str>"
        }
        "launch" => {
            if v.to_object().is_some_and(|m| m.type_index() == kTVMFFIMap) {
                return Ok(());
            }
            "a Map<str, Map>"
        }
        _ => return Ok(()),
    };
    Err(Error::value(format!(
        "`metadata[\"{key}\"]` must be {want}, got {}",
        key_of(v)
    )))
}

/// `obj` when its type is `K`, else a TypeError naming `key`.
fn expect_type<K: ObjType>(obj: ObjectRef, key: &str) -> Result<ObjectRef> {
    if K::accepts(obj.type_index()) {
        Ok(obj)
    } else {
        Err(Error::type_error(format!(
            "expected an {key}, got {}",
            crate::runtime::model::type_table::type_key_of(obj.type_index())
        )))
    }
}

/// A str entry of a metadata map.
fn meta_str_of(metadata: &ObjectRef, key: &str) -> Option<String> {
    let v = map::get(metadata, make_text(key.as_bytes(), TextKind::Str).view()).ok()??;
    as_text(v.view()).map(str::to_owned)
}

/// A named, typed compiler output (an `ffi.Artifact` object).
#[derive(Clone, Debug)]
pub struct Artifact(ObjectRef);

impl Artifact {
    /// Makes an artifact: checks the names and the well-known metadata
    /// keys, computes `sha256` (a supplied one must match). `content` is a
    /// bytes or str value.
    pub fn new(
        codegen_id: &str,
        loader: &str,
        file_name: &str,
        content: Any,
        metadata: Option<&ObjectRef>,
    ) -> Result<Artifact> {
        make_artifact(
            [codegen_id, loader, file_name].map(str::as_bytes),
            content,
            metadata,
            Digest::Verify,
        )
    }

    /// A builder for an artifact with metadata.
    pub fn builder(codegen_id: &str, loader: &str, file_name: &str) -> ArtifactBuilder {
        ArtifactBuilder {
            codegen_id: codegen_id.to_owned(),
            loader: loader.to_owned(),
            file_name: file_name.to_owned(),
            content: make_text(b"", TextKind::Bytes),
            metadata: Vec::new(),
        }
    }

    /// Views an object as an artifact (a TypeError for anything else).
    pub fn from_object(obj: ObjectRef) -> Result<Artifact> {
        expect_type::<ArtifactT>(obj, ARTIFACT_KEY).map(Artifact)
    }

    fn fields(&self) -> &ArtifactObj {
        self.0.cell().expect("an Artifact holds an artifact object")
    }

    /// The codegen that produced it.
    pub fn codegen_id(&self) -> &str {
        as_text(self.fields().codegen_id.0.view()).unwrap_or("")
    }
    /// The loader that turns it into a module.
    pub fn loader(&self) -> &str {
        as_text(self.fields().loader.0.view()).unwrap_or("")
    }
    /// Its file name.
    pub fn file_name(&self) -> &str {
        as_text(self.fields().file_name.0.view()).unwrap_or("")
    }
    /// Its bytes.
    pub fn content(&self) -> &[u8] {
        self.fields().content.0.view().as_bytes().unwrap_or(&[])
    }
    /// The content value (a bytes value, shared, not copied).
    pub fn content_value(&self) -> &Any {
        &self.fields().content.0
    }
    /// Its metadata (a `Map<str, Any>`).
    pub fn metadata(&self) -> &ObjectRef {
        self.fields()
            .metadata
            .as_ref()
            .expect("artifacts always carry metadata")
    }
    /// A str metadata entry.
    pub fn meta_str(&self, key: &str) -> Option<String> {
        meta_str_of(self.metadata(), key)
    }
    /// `metadata["format"]`.
    pub fn format(&self) -> Option<String> {
        self.meta_str("format")
    }
    /// `metadata["sha256"]`.
    pub fn sha256(&self) -> String {
        self.meta_str("sha256").unwrap_or_default()
    }
    /// The object.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }
    /// The object, given up.
    pub fn into_object(self) -> ObjectRef {
        self.0
    }
}

/// Builds an [`Artifact`] with its metadata.
pub struct ArtifactBuilder {
    codegen_id: String,
    loader: String,
    file_name: String,
    content: Any,
    metadata: Vec<(Any, Any)>,
}

impl ArtifactBuilder {
    /// The content, copied into a bytes value.
    pub fn content(mut self, bytes: &[u8]) -> Self {
        self.content = make_text(bytes, TextKind::Bytes);
        self
    }
    /// The content, an existing bytes value (shared, not copied).
    pub fn content_value(mut self, value: Any) -> Self {
        self.content = value;
        self
    }
    /// A metadata entry.
    pub fn meta(mut self, key: &str, value: Any) -> Self {
        self.metadata
            .push((make_text(key.as_bytes(), TextKind::Str), value));
        self
    }
    /// A str metadata entry.
    pub fn meta_str(self, key: &str, value: &str) -> Self {
        self.meta(key, make_text(value.as_bytes(), TextKind::Str))
    }
    /// `metadata["format"]`.
    pub fn format(self, format: &str) -> Self {
        self.meta_str("format", format)
    }
    /// `metadata["target"]`.
    pub fn target(self, target: &str) -> Self {
        self.meta_str("target", target)
    }
    /// `metadata["entry_functions"]`.
    pub fn entry_functions(self, names: &[&str]) -> Self {
        let items = names
            .iter()
            .map(|n| make_text(n.as_bytes(), TextKind::Str))
            .collect();
        self.meta("entry_functions", Any::from(seq::new_array(items)))
    }
    /// Makes the artifact.
    pub fn build(self) -> Result<Artifact> {
        let metadata = map::new_map(kTVMFFIMap, self.metadata)?;
        Artifact::new(
            &self.codegen_id,
            &self.loader,
            &self.file_name,
            self.content,
            Some(&metadata),
        )
    }
}

/// The content argument as a bytes value: bytes as they are, a str as its
/// UTF-8 bytes.
fn content_value(content: Any) -> Result<Any> {
    let v = content.view();
    if let Some(text) = str_bytes_of(v, TextKind::Str) {
        return Ok(make_text(text, TextKind::Bytes));
    }
    match v.type_index() {
        kTVMFFISmallBytes | kTVMFFIBytes => Ok(content),
        kTVMFFIByteArrayPtr => Ok(make_text(v.as_bytes().unwrap_or(&[]), TextKind::Bytes)),
        _ => Err(Error::type_error(format!(
            "`content` must be bytes or str, got {}",
            key_of(v)
        ))),
    }
}

/// Whether a supplied `sha256` is checked against the content.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Digest {
    /// Compute it; a supplied one must match.
    Verify,
    /// Keep a supplied one as it is (computed only when absent): for
    /// contents read from a library image this process loaded and so
    /// already trusts (its code runs), where hashing would touch every
    /// page of large constants.
    TrustRecorded,
}

/// `ffi.Artifact`: `names` are the codegen_id, loader and file_name.
pub(crate) fn make_artifact(
    names: [&[u8]; 3],
    content: Any,
    metadata: Option<&ObjectRef>,
    digest: Digest,
) -> Result<Artifact> {
    let [codegen_id, loader, file_name] = names;
    check_id("codegen_id", codegen_id)?;
    check_id("loader", loader)?;
    check_file_name("file_name", file_name)?;
    let content = content_value(content)?;
    let bytes = content.view().as_bytes().unwrap_or(&[]);
    let mut pairs = Vec::new();
    let mut recorded = None;
    for (key, value) in str_map_items("metadata", metadata)? {
        check_artifact_meta(&key, value.view())?;
        if key == "sha256" {
            recorded = Some(as_text(value.view()).unwrap_or("").to_owned());
            continue;
        }
        pairs.push((make_text(key.as_bytes(), TextKind::Str), value));
    }
    let sha = match recorded {
        Some(given) if digest == Digest::TrustRecorded => given,
        Some(given) => {
            let sha = sha256_hex(bytes);
            if given != sha {
                return Err(Error::value(format!(
                    "`metadata[\"sha256\"]` is {given} but the content's SHA-256 is {sha}"
                )));
            }
            sha
        }
        None => sha256_hex(bytes),
    };
    pairs.push((
        make_text(b"sha256", TextKind::Str),
        make_text(sha.as_bytes(), TextKind::Str),
    ));
    let (index, _) = types()?;
    let text = |b: &[u8]| AnyField(make_text(b, TextKind::Str));
    Ok(Artifact(new_object(
        index,
        ArtifactObj {
            codegen_id: text(codegen_id),
            loader: text(loader),
            file_name: text(file_name),
            content: AnyField(content),
            metadata: Some(map::new_map(kTVMFFIMap, pairs)?),
        },
    )))
}

/// `ffi.ArtifactFromConstants`: named CPU tensors serialized in the params
/// format, as an artifact of loader `constants` and format `params`.
pub(crate) fn artifact_from_constants(
    codegen_id: &str,
    file_name: &str,
    constants: &ObjectRef,
) -> Result<Artifact> {
    let items = str_map_items("constants", Some(constants))?;
    let mut tensors = Vec::with_capacity(items.len());
    for (name, value) in &items {
        let t = value
            .view()
            .to_object()
            .filter(|o| o.type_index() == kTVMFFITensor)
            .ok_or_else(|| {
                Error::type_error(format!(
                    "constant \"{name}\" must be an ffi.Tensor, got {}",
                    key_of(value.view())
                ))
            })?;
        tensors.push((name.as_str(), t));
    }
    let mut records = Vec::with_capacity(tensors.len());
    for (name, t) in &tensors {
        let dl = tensor::dl_tensor(t)?;
        let bytes = tensor::compact_cpu_bytes(t)
            .map_err(|e| e.rewrap(|m| format!("constant \"{name}\": {m}")))?;
        records.push((*name, dl.dtype, tensor::shape(t)?, bytes));
    }
    let content = params::encode(&records)?;
    Artifact::builder(codegen_id, CONSTANTS_LOADER, file_name)
        .content(&content)
        .format(CONSTANTS_FORMAT)
        .build()
}

/// A set of artifacts with its metadata (an `ffi.ArtifactSet` object).
#[derive(Clone, Debug)]
pub struct ArtifactSet(ObjectRef);

impl ArtifactSet {
    /// Makes a set: checks that `(codegen_id, file_name)` pairs are unique
    /// and fills the metadata the caller leaves out.
    pub fn new(artifacts: Vec<Artifact>, metadata: Option<&ObjectRef>) -> Result<ArtifactSet> {
        let items = artifacts
            .into_iter()
            .map(|a| Any::from(a.into_object()))
            .collect();
        make_set(&seq::new_array(items), metadata)
    }

    /// Views an object as a set (a TypeError for anything else).
    pub fn from_object(obj: ObjectRef) -> Result<ArtifactSet> {
        expect_type::<ArtifactSetT>(obj, ARTIFACT_SET_KEY).map(ArtifactSet)
    }

    fn fields(&self) -> &ArtifactSetObj {
        self.0.cell().expect("an ArtifactSet holds a set object")
    }

    /// The artifacts, in order.
    pub fn artifacts(&self) -> Vec<Artifact> {
        let array = self
            .fields()
            .artifacts
            .as_ref()
            .expect("sets carry artifacts");
        seq::views(array, kTVMFFIArray)
            .map(|items| items.filter_map(|v| v.to_object()).map(Artifact).collect())
            .unwrap_or_default()
    }
    /// Its metadata (a `Map<str, Any>`).
    pub fn metadata(&self) -> &ObjectRef {
        self.fields()
            .metadata
            .as_ref()
            .expect("sets carry metadata")
    }
    /// A str metadata entry.
    pub fn meta_str(&self, key: &str) -> Option<String> {
        meta_str_of(self.metadata(), key)
    }
    /// `metadata["model_name"]`.
    pub fn model_name(&self) -> String {
        self.meta_str("model_name")
            .unwrap_or_else(|| "model".into())
    }
    /// The handshake: a set made for a newer major ABI than ours is refused
    /// with an error naming both versions.
    pub fn check_abi(&self) -> Result<()> {
        let recorded = self.meta_str("tvm_ffi_abi").unwrap_or_default();
        let (major, _) = parse_abi(&recorded)?;
        if major > u64::from(TVM_FFI_VERSION_MAJOR) {
            return Err(Error::value(format!(
                "the artifact set was made for TVM-FFI ABI {recorded}, newer than this library's {}",
                our_abi()
            )));
        }
        Ok(())
    }
    /// The object.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }
    /// The object, given up.
    pub fn into_object(self) -> ObjectRef {
        self.0
    }
}

/// Our ABI version, `"MAJOR.MINOR"`.
fn our_abi() -> String {
    format!("{TVM_FFI_VERSION_MAJOR}.{TVM_FFI_VERSION_MINOR}")
}

/// Parses `"MAJOR.MINOR"`.
fn parse_abi(text: &str) -> Result<(u64, u64)> {
    let parsed = text
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    parsed.ok_or_else(|| {
        Error::value(format!(
            "`metadata[\"tvm_ffi_abi\"]` must be \"MAJOR.MINOR\", got \"{}\"",
            text.escape_debug()
        ))
    })
}

/// The current time as ISO 8601 UTC (`2026-11-23T12:34:56Z`).
fn now_iso8601() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// `ffi.ArtifactSet`.
fn make_set(artifacts: &ObjectRef, metadata: Option<&ObjectRef>) -> Result<ArtifactSet> {
    let (_, set_index) = types()?;
    let mut seen = std::collections::HashSet::new();
    for (i, v) in seq::views(artifacts, kTVMFFIArray)?.enumerate() {
        let a = v
            .to_object()
            .and_then(|o| Artifact::from_object(o).ok())
            .ok_or_else(|| {
                Error::type_error(format!(
                    "`artifacts[{i}]` must be an {ARTIFACT_KEY}, got {}",
                    key_of(v)
                ))
            })?;
        if !seen.insert((a.codegen_id().to_owned(), a.file_name().to_owned())) {
            return Err(Error::value(format!(
                "duplicate artifact (codegen_id \"{}\", file_name \"{}\")",
                a.codegen_id(),
                a.file_name()
            )));
        }
    }
    let mut given = str_map_items("metadata", metadata)?;
    for (key, value) in &given {
        let v = value.view();
        match key.as_str() {
            "model_name" => check_file_name(
                "metadata[\"model_name\"]",
                as_text(v).unwrap_or("").as_bytes(),
            )?,
            "version" if v.type_index() != kTVMFFIInt => {
                return Err(Error::value(format!(
                    "`metadata[\"version\"]` must be an int, got {}",
                    key_of(v)
                )));
            }
            "tvm_ffi_abi" => {
                parse_abi(as_text(v).unwrap_or(""))?;
            }
            "created" | "producer" if as_text(v).is_none() => {
                return Err(Error::value(format!(
                    "`metadata[\"{key}\"]` must be a str, got {}",
                    key_of(v)
                )));
            }
            _ => {}
        }
    }
    let text = |s: &str| make_text(s.as_bytes(), TextKind::Str);
    let defaults = [
        ("model_name", text("model")),
        ("version", Any::from(SET_FORMAT_VERSION)),
        ("created", text(&now_iso8601())),
        (
            "producer",
            text(concat!("tvm-ffi-rs ", env!("CARGO_PKG_VERSION"))),
        ),
        ("tvm_ffi_abi", text(&our_abi())),
    ];
    for (key, value) in defaults {
        if !given.iter().any(|(k, _)| k == key) {
            given.push((key.to_owned(), value));
        }
    }
    let pairs = given.into_iter().map(|(k, v)| (text(&k), v));
    Ok(ArtifactSet(new_object(
        set_index,
        ArtifactSetObj {
            artifacts: Some(artifacts.clone()),
            metadata: Some(map::new_map(kTVMFFIMap, pairs)?),
        },
    )))
}

/// The artifacts of an `Array<ffi.Artifact>` handed to the global `who`.
pub(crate) fn artifacts_of_array(array: &ObjectRef, who: &str) -> Result<Vec<Artifact>> {
    seq::views(array, kTVMFFIArray)?
        .map(|v| {
            let takes = || Error::type_error(format!("{who} takes artifacts"));
            v.to_object()
                .ok_or_else(takes)
                .and_then(Artifact::from_object)
        })
        .collect()
}

/// `items` as an `Array<ffi.Artifact>`, as globals return them.
pub(crate) fn array_of_artifacts(items: Vec<Artifact>) -> Owned<ArrayT> {
    Owned::new(seq::new_array(
        items
            .into_iter()
            .map(|a| Any::from(a.into_object()))
            .collect(),
    ))
}

/// One module of a loader's modules (one per `codegen_id`): the first,
/// importing the others; `who` names the loader when there are none.
pub(crate) fn first_importing_rest(
    modules: impl IntoIterator<Item = Result<crate::module::objects::module::Module>>,
    who: &str,
) -> Result<crate::module::objects::module::Module> {
    let mut modules = modules.into_iter();
    let first = modules
        .next()
        .ok_or_else(|| Error::value(format!("{who}: no artifacts of this loader")))??;
    for m in modules {
        first.import(&m?)?;
    }
    Ok(first)
}

/// Registers the artifact globals.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.Artifact",
        |codegen_id: Str<'_>,
             loader: Str<'_>,
             file_name: Str<'_>,
             content: AnyView<'_>,
             metadata: Option<Obj<'_, MapT>>|
            -> Owned<ArtifactT> {
            let a = make_artifact(
                [codegen_id.0, loader.0, file_name.0],
                content.to_owned_any()?,
                metadata.as_deref(),
                Digest::Verify,
            )?;
            Ok(Owned::new(a.into_object()))
        }
    });
    g.add(typed_fn! {
        "ffi.ArtifactFromConstants",
        |codegen_id: Str<'_>,
             file_name: Str<'_>,
             constants: Obj<'_, MapT>|
            -> Owned<ArtifactT> {
            let text = |s: Str<'_>, field: &str| {
                core::str::from_utf8(s.0)
                    .map(str::to_owned)
                    .map_err(|_| Error::value(format!("`{field}` is not UTF-8")))
            };
            let a = artifact_from_constants(
                &text(codegen_id, "codegen_id")?,
                &text(file_name, "file_name")?,
                &constants,
            )?;
            Ok(Owned::new(a.into_object()))
        }
    });
    g.add(typed_fn! {
        "ffi.ArtifactSet",
        |artifacts: Obj<'_, ArrayT>, metadata: Option<Obj<'_, MapT>>| -> Owned<ArtifactSetT> {
            Ok(Owned::new(
                make_set(&artifacts, metadata.as_deref())?.into_object(),
            ))
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_sha256_computed() {
        let a = Artifact::builder("c", "native", "lib0.c")
            .content(b"int x;")
            .format("c")
            .build()
            .unwrap();
        assert_eq!(a.sha256(), sha256_hex(b"int x;"));
        assert_eq!(a.content(), b"int x;");
        assert_eq!(a.format().as_deref(), Some("c"));
        for bad in ["", ".", "..", "a/b", "a\\b"] {
            let err = Artifact::builder("c", "native", bad).build().unwrap_err();
            assert!(
                err.to_string().starts_with("ValueError: `file_name`"),
                "{err}"
            );
        }
        assert!(Artifact::builder("c", "native", "a..b").build().is_ok());
        let err = Artifact::builder("c d", "native", "x").build().unwrap_err();
        assert!(err.to_string().contains("`codegen_id`"), "{err}");
        let err = Artifact::builder("c", "", "x").build().unwrap_err();
        assert!(err.to_string().contains("`loader`"), "{err}");
        let err = Artifact::builder("c", "native", "x")
            .meta_str("sha256", "00")
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("SHA-256"), "{err}");
    }

    #[test]
    fn sets_refuse_duplicates_and_fill_metadata() {
        let a = || Artifact::builder("c", "native", "lib0.c").build().unwrap();
        let err = ArtifactSet::new(vec![a(), a()], None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ValueError: duplicate artifact (codegen_id \"c\", file_name \"lib0.c\")"
        );
        let set = ArtifactSet::new(vec![a()], None).unwrap();
        assert_eq!(set.model_name(), "model");
        assert_eq!(set.meta_str("tvm_ffi_abi"), Some(our_abi()));
        assert!(set.meta_str("created").unwrap().ends_with('Z'));
        assert!(set.check_abi().is_ok());
        let newer = map::new_map(
            kTVMFFIMap,
            [(
                make_text(b"tvm_ffi_abi", TextKind::Str),
                make_text(b"999.0", TextKind::Str),
            )],
        )
        .unwrap();
        let set = ArtifactSet::new(vec![a()], Some(&newer)).unwrap();
        assert_eq!(
            set.check_abi().unwrap_err().to_string(),
            format!(
                "ValueError: the artifact set was made for TVM-FFI ABI 999.0, newer than this library's {}",
                our_abi()
            )
        );
    }
}
