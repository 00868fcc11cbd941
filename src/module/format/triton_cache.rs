//! A Triton kernel as Triton writes it (its cache entry), read without
//! loading anything:
//!
//! - the metadata (`<name>.json`): the launch parameters Triton's own
//!   launcher reads (`num_warps`, `num_ctas`, `shared`, the scratch sizes
//!   and alignments, `launch_pdl`, `launch_cooperative_grid`), the target
//!   and the release that compiled it ([`Metadata`]);
//! - the signature: the `tt.func` line of the TTIR or source (`<name>.ttir`,
//!   `<name>.source`), whose parameters are the kernel's runtime parameters
//!   in order, constexprs already folded in ([`Signature`]).
//!
//! Every field is checked against bounds a launch can use (a hostile file
//! with a `num_warps` of 2^40 or a shared memory size of a terabyte is an
//! error naming the field), and the text is read in one pass.
#![forbid(unsafe_code)]

use crate::abi::{kTVMFFIArray, kTVMFFIMap};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text, str_bytes_of};
use crate::runtime::value::{json, map, seq};

/// A scalar type of a Triton parameter, by its width (TTIR drops
/// signedness: `u32` compiles to `i32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// `i1` (a bool), one byte.
    I1,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `fp16`.
    F16,
    /// `bf16`.
    BF16,
    /// `fp32`.
    F32,
    /// `fp64`.
    F64,
}

impl Scalar {
    /// Its MLIR spelling in TTIR.
    fn from_mlir(t: &str) -> Option<Scalar> {
        Some(match t {
            "i1" => Scalar::I1,
            "i8" => Scalar::I8,
            "i16" => Scalar::I16,
            "i32" => Scalar::I32,
            "i64" => Scalar::I64,
            "f16" => Scalar::F16,
            "bf16" => Scalar::BF16,
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            _ => return None,
        })
    }
    /// Triton's spelling (`i32`, `fp32`).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I1 => "i1",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F16 => "fp16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "fp32",
            Scalar::F64 => "fp64",
        }
    }
    /// Its size in bytes as a kernel parameter.
    pub fn size(self) -> usize {
        match self {
            Scalar::I1 | Scalar::I8 => 1,
            Scalar::I16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::F64 => 8,
        }
    }
    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
    }
    /// Its DLPack type code and bits (bool is DLPack's `kDLBool`, 8 bits).
    pub fn dlpack(self) -> (u8, u8) {
        match self {
            Scalar::I1 => (6, 8),
            Scalar::I8 => (0, 8),
            Scalar::I16 => (0, 16),
            Scalar::I32 => (0, 32),
            Scalar::I64 => (0, 64),
            Scalar::F16 => (2, 16),
            Scalar::BF16 => (4, 16),
            Scalar::F32 => (2, 32),
            Scalar::F64 => (2, 64),
        }
    }
}

/// A parameter's type: a pointer to elements, or a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// `*fp32` and the like: a device pointer.
    Pointer(Scalar),
    /// A scalar passed by value.
    Value(Scalar),
}

impl ParamType {
    /// Its size in bytes as a kernel parameter.
    pub fn size(self) -> usize {
        match self {
            ParamType::Pointer(_) => 8,
            ParamType::Value(s) => s.size(),
        }
    }
    /// Triton's spelling (`*fp32`, `i32`).
    pub fn spelling(self) -> String {
        match self {
            ParamType::Pointer(s) => format!("*{}", s.name()),
            ParamType::Value(s) => s.name().to_owned(),
        }
    }
}

/// One runtime parameter of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name (`%arg0` style names lose the `%`).
    pub name: String,
    /// Its type.
    pub ty: ParamType,
}

/// The kernel's name and runtime parameters, from its `tt.func` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The function's symbol.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
}

/// The most parameters a kernel may declare (CUDA's 32 KiB parameter
/// space holds no more 8-byte ones).
const MAX_PARAMS: usize = 4096;

/// Reads the first `tt.func` of TTIR or Triton's source listing.
pub fn parse_signature(text: &[u8]) -> Result<Signature> {
    let text = String::from_utf8_lossy(text);
    let bad = |why: &str| Error::value(format!("Triton signature: {why}"));
    let at = text
        .find("tt.func")
        .ok_or_else(|| bad("no `tt.func` line (expected the kernel's TTIR or source)"))?;
    let rest = &text[at..];
    let at_name = rest
        .find('@')
        .ok_or_else(|| bad("the `tt.func` line names no function"))?;
    let rest = &rest[at_name + 1..];
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .unwrap_or(rest.len());
    let name = &rest[..name_end];
    if name.is_empty() {
        return Err(bad("the `tt.func` line names no function"));
    }
    let rest = rest[name_end..]
        .strip_prefix('(')
        .ok_or_else(|| bad("no parameter list after the function's name"))?;
    // The parameter list up to its closing parenthesis, split at the
    // commas outside brackets (`loc("x"(#loc))`, `{tt.divisibility = 16 : i32}`).
    let mut depth = 0usize;
    let mut params = Vec::new();
    let mut start = 0usize;
    let mut end = None;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '{' | '<' | '[' => depth += 1,
            ')' if depth == 0 => {
                end = Some(i);
                break;
            }
            ')' | '}' | '>' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                params.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if params.len() > MAX_PARAMS {
            return Err(bad(&format!("more than {MAX_PARAMS} parameters")));
        }
    }
    let end = end.ok_or_else(|| bad("the parameter list is not closed"))?;
    if !rest[start..end].trim().is_empty() {
        params.push(&rest[start..end]);
    }
    let params = params
        .iter()
        .enumerate()
        .map(|(i, p)| parse_param(i, p.trim()))
        .collect::<Result<Vec<_>>>()?;
    Ok(Signature {
        name: name.to_owned(),
        params,
    })
}

/// One `%name: type attributes loc(...)` of the list.
fn parse_param(i: usize, text: &str) -> Result<Param> {
    let bad = |why: String| Error::value(format!("Triton signature: parameter {i}: {why}"));
    let (name, ty) = text
        .split_once(':')
        .ok_or_else(|| bad(format!("{text:?} is not `%name: type`")))?;
    let name = name.trim().trim_start_matches('%').to_owned();
    let ty = ty.trim();
    let ty_end = ty
        .find(|c: char| c.is_whitespace() || c == '{')
        .unwrap_or(ty.len());
    let ty = &ty[..ty_end];
    let ty = if let Some(inner) = ty.strip_prefix("!tt.ptr<") {
        let elem = inner
            .trim_end_matches('>')
            .split(',')
            .next()
            .unwrap_or_default()
            .trim();
        ParamType::Pointer(Scalar::from_mlir(elem).ok_or_else(|| {
            bad(format!(
                "{name}: a pointer to {elem}, which no launch takes"
            ))
        })?)
    } else {
        ParamType::Value(Scalar::from_mlir(ty).ok_or_else(|| {
            bad(format!(
                "{name}: type {ty} is none of the scalars and pointers a launch takes \
                 (tensor descriptors are not supported)"
            ))
        })?)
    };
    Ok(Param { name, ty })
}

/// A scratch buffer the launcher allocates per launch: `size` bytes per
/// program (times `num_ctas`), aligned to `align`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scratch {
    /// Bytes per program; 0 passes NULL.
    pub size: u64,
    /// The alignment, a power of two.
    pub align: u64,
}

/// What a launch needs from Triton's metadata (`<name>.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The kernel's symbol.
    pub name: String,
    /// The release that compiled it (`triton_version`; empty before
    /// Triton 3.3, which did not record it).
    pub triton_version: String,
    /// The compute capability it was compiled for (`target`, `arch`), as
    /// `major * 10 + minor`.
    pub arch: u32,
    /// Warps per program.
    pub num_warps: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Programs per cluster.
    pub num_ctas: u32,
    /// The cluster's shape (`cluster_dims`, written up to Triton 3.5).
    pub cluster_dims: Option<[u32; 3]>,
    /// Dynamic shared memory in bytes.
    pub shared: u32,
    /// The global scratch (a hidden trailing parameter from Triton 3.3 on).
    pub global_scratch: Option<Scratch>,
    /// The profile scratch (a second hidden parameter from Triton 3.5 on).
    pub profile_scratch: Option<Scratch>,
    /// Launch with programmatic stream serialization.
    pub launch_pdl: bool,
    /// Launch cooperatively.
    pub launch_cooperative_grid: bool,
}

/// Bounds a launch can use (a larger value is an error naming the field).
const MAX_WARPS: u64 = 32;
const MAX_CTAS: u64 = 16;
const MAX_SHARED: u64 = 16 << 20;
const MAX_SCRATCH: u64 = 1 << 30;
const MAX_ALIGN: u64 = 1 << 12;

/// Reads the metadata Triton wrote for a kernel.
pub fn parse_metadata(bytes: &[u8]) -> Result<Metadata> {
    let doc = json::parse(bytes).map_err(|e| e.rewrap(|m| format!("Triton metadata: {m}")))?;
    let obj = doc
        .view()
        .to_object()
        .filter(|o| o.type_index() == kTVMFFIMap)
        .ok_or_else(|| Error::type_error("Triton metadata: the JSON must be an object"))?;
    let field = |name: &str| -> Result<Option<Any>> {
        map::get(&obj, make_text(name.as_bytes(), TextKind::Str).view())
    };
    let missing = |name: &str| Error::value(format!("Triton metadata: {name:?} is missing"));
    let text = |name: &str| -> Result<Option<String>> {
        match field(name)? {
            None => Ok(None),
            Some(v) if v.view().type_index() == crate::abi::kTVMFFINone => Ok(None),
            Some(v) => str_bytes_of(v.view(), TextKind::Str)
                .map(|b| Some(String::from_utf8_lossy(b).into_owned()))
                .ok_or_else(|| {
                    Error::type_error(format!("Triton metadata: {name:?} must be a string"))
                }),
        }
    };
    let int = |name: &str, lo: u64, hi: u64| -> Result<Option<u64>> {
        let Some(v) = field(name)? else {
            return Ok(None);
        };
        let n = v.view().as_i64().ok_or_else(|| {
            Error::type_error(format!("Triton metadata: {name:?} must be an int"))
        })?;
        u64::try_from(n)
            .ok()
            .filter(|n| (lo..=hi).contains(n))
            .map(Some)
            .ok_or_else(|| {
                Error::value(format!(
                    "Triton metadata: {name:?} = {n} is outside {lo}..={hi}"
                ))
            })
    };
    let flag = |name: &str| -> Result<bool> {
        Ok(match field(name)? {
            None => false,
            Some(v) => {
                v.view().as_i64().ok_or_else(|| {
                    Error::type_error(format!("Triton metadata: {name:?} must be a bool"))
                })? != 0
            }
        })
    };
    let scratch = |prefix: &str| -> Result<Option<Scratch>> {
        let size = int(&format!("{prefix}_size"), 0, MAX_SCRATCH)?;
        let align = int(&format!("{prefix}_align"), 1, MAX_ALIGN)?;
        match (size, align) {
            (None, None) => Ok(None),
            (Some(size), align) => {
                let align = align.unwrap_or(1);
                if !align.is_power_of_two() {
                    return Err(Error::value(format!(
                        "Triton metadata: \"{prefix}_align\" = {align} is not a power of two"
                    )));
                }
                Ok(Some(Scratch { size, align }))
            }
            (None, Some(_)) => Err(missing(&format!("{prefix}_size"))),
        }
    };
    let name = text("name")?.ok_or_else(|| missing("name"))?;
    let triton_version = text("triton_version")?.unwrap_or_default();
    // `target` is `{"backend": "cuda", "arch": 90, ...}` in the cache entry,
    // `GPUTarget(backend='cuda', arch=90, ...)` where Python printed it.
    let arch = match field("target")? {
        Some(t) => match t
            .view()
            .to_object()
            .filter(|o| o.type_index() == kTVMFFIMap)
        {
            Some(target) => {
                let get =
                    |k: &str| map::get(&target, make_text(k.as_bytes(), TextKind::Str).view());
                let cuda = get("backend")?
                    .and_then(|b| str_bytes_of(b.view(), TextKind::Str).map(|b| b == b"cuda"))
                    .unwrap_or(false);
                let arch = get("arch")?.and_then(|a| a.view().as_i64());
                if !cuda {
                    return Err(Error::value(
                        "Triton metadata: the target's backend is not cuda",
                    ));
                }
                arch.and_then(|a| u32::try_from(a).ok())
            }
            None => str_bytes_of(t.view(), TextKind::Str)
                .and_then(|b| target_arch(&String::from_utf8_lossy(b))),
        },
        None => None,
    }
    .or(text("arch")?.and_then(|a| {
        a.trim_start_matches("sm")
            .trim_start_matches('_')
            .parse()
            .ok()
    }))
    .ok_or_else(|| missing("target"))?;
    let num_warps = int("num_warps", 1, MAX_WARPS)?.ok_or_else(|| missing("num_warps"))?;
    let warp_size = int("warp_size", 32, 32)?.unwrap_or(32);
    let cluster_dims = match field("cluster_dims")? {
        None => None,
        Some(v) => Some(cluster_shape(&v)?),
    };
    Ok(Metadata {
        name,
        triton_version,
        arch,
        num_warps: num_warps as u32,
        warp_size: warp_size as u32,
        num_ctas: int("num_ctas", 1, MAX_CTAS)?.unwrap_or(1) as u32,
        cluster_dims,
        shared: int("shared", 0, MAX_SHARED)?.ok_or_else(|| missing("shared"))? as u32,
        global_scratch: scratch("global_scratch")?,
        profile_scratch: scratch("profile_scratch")?,
        launch_pdl: flag("launch_pdl")?,
        launch_cooperative_grid: flag("launch_cooperative_grid")?,
    })
}

/// The compute capability of `GPUTarget(backend='cuda', arch=90, warp_size=32)`.
fn target_arch(target: &str) -> Option<u32> {
    if !target.contains("'cuda'") {
        return None;
    }
    let at = target.find("arch=")? + "arch=".len();
    let digits: String = target[at..]
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `cluster_dims`: three sizes, each at least 1, making at most
/// [`MAX_CTAS`] programs.
fn cluster_shape(v: &Any) -> Result<[u32; 3]> {
    let bad = || {
        Error::value(format!(
            "Triton metadata: \"cluster_dims\" must be three sizes of at least 1 making at most \
             {MAX_CTAS} programs"
        ))
    };
    let list = v.view().to_object().ok_or_else(bad)?;
    let items: Vec<AnyView<'_>> = seq::views(&list, kTVMFFIArray)
        .map_err(|_| bad())?
        .collect();
    if items.len() != 3 {
        return Err(bad());
    }
    let mut dims = [0u32; 3];
    for (d, item) in dims.iter_mut().zip(&items) {
        *d = item
            .as_i64()
            .filter(|&n| n >= 1 && n as u64 <= MAX_CTAS)
            .ok_or_else(bad)? as u32;
    }
    if u64::from(dims[0]) * u64::from(dims[1]) * u64::from(dims[2]) > MAX_CTAS {
        return Err(bad());
    }
    Ok(dims)
}

impl Metadata {
    /// The release as messages name it: `triton_version`, or `3.0-3.2`
    /// where none is recorded (those releases did not record it).
    pub fn release(&self) -> &str {
        if self.triton_version.is_empty() {
            "3.0-3.2"
        } else {
            &self.triton_version
        }
    }

    /// Threads per program.
    pub fn block(&self) -> u32 {
        self.warp_size * self.num_warps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_read_as_triton_writes_them() {
        let s = parse_signature(
            b"module {\n  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> loc(\"x_ptr\"(#loc)), \
              %n: i32 {tt.divisibility = 16 : i32} loc(\"n\"(#loc)), %h: f16, %arg3: !tt.ptr<bf16, 1>) \
              attributes {noinline = false} {",
        )
        .unwrap();
        assert_eq!(s.name, "add_kernel");
        let got: Vec<(String, String)> = s
            .params
            .iter()
            .map(|p| (p.name.clone(), p.ty.spelling()))
            .collect();
        assert_eq!(
            got,
            [
                ("x_ptr", "*fp32"),
                ("n", "i32"),
                ("h", "fp16"),
                ("arg3", "*bf16")
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        assert_eq!(
            parse_signature(b"tt.func public @k() {").unwrap().params,
            []
        );
        for bad in [
            &b"no function here"[..],
            b"tt.func @k(%a: i32",
            b"tt.func @k(%a: !tt.tensordesc<tensor<64xf32>>)",
            b"tt.func @k(%a)",
        ] {
            assert!(
                parse_signature(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn metadata_fields_are_bounded() {
        let base = r#"{"name": "k", "triton_version": "3.9.0", "target": "GPUTarget(backend='cuda', arch=90, warp_size=32)",
            "num_warps": 4, "num_ctas": 1, "shared": 0, "global_scratch_size": 0, "global_scratch_align": 1,
            "profile_scratch_size": 0, "profile_scratch_align": 1, "launch_pdl": false, "launch_cooperative_grid": false, "warp_size": 32}"#;
        let m = parse_metadata(base.as_bytes()).unwrap();
        assert_eq!((m.arch, m.block(), m.num_ctas), (90, 128, 1));
        assert!(m.profile_scratch.is_some());
        for (from, to, says) in [
            (
                "\"num_warps\": 4",
                "\"num_warps\": 1099511627776",
                "\"num_warps\" = 1099511627776 is outside 1..=32",
            ),
            ("\"shared\": 0", "\"shared\": 1000000000000", "\"shared\""),
            (
                "\"global_scratch_align\": 1",
                "\"global_scratch_align\": 3",
                "not a power of two",
            ),
            ("\"num_ctas\": 1", "\"num_ctas\": \"1\"", "must be an int"),
            ("\"name\": \"k\", ", "", "\"name\" is missing"),
        ] {
            let e = parse_metadata(base.replace(from, to).as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{e}");
        }
        for (dims, ok) in [
            ("[2, 1, 1]", true),
            ("[4, 4, 2]", false),
            ("[0, 1, 1]", false),
            ("[2, 1]", false),
            ("2", false),
        ] {
            let r = parse_metadata(
                base.replace("\"warp_size\": 32}", &format!("\"cluster_dims\": {dims}}}"))
                    .as_bytes(),
            );
            assert_eq!(r.is_ok(), ok, "{dims}: {r:?}");
        }
    }
}
