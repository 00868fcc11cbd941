//! TVM's serialized CUDA module, the payload of a `cuda` entry of
//! `__tvm_ffi__library_bin` (`CUDAModuleNode::SaveToBytes` of TVM 0.27):
//!
//! ```text
//! fmt:  u64 length, bytes            ("ptx", "cubin", "fatbin" or "cuda")
//! fmap: u64 count, then per kernel:
//!       key   u64 length, bytes
//!       name  u64 length, bytes
//!       arg_types          u64 count, per type u8 code, u8 bits, u16 lanes
//!       launch_param_tags  u64 count, per tag u64 length, bytes
//!       arg_extra_tags     u64 count, per tag i32 (0 none, 1 tensor map)
//! code: u64 length, bytes
//! ```
//!
//! All integers are little-endian. Every length and count is checked
//! against the bytes left before anything is allocated, so a hostile header
//! (a count of 2^40, a length one past the end) is an error that names the
//! field, never an allocation of what it claims. [`encode`] writes a
//! decoded blob back byte for byte. The launch tags are read here too
//! ([`LaunchTags`]): the packed call of a kernel is its arguments, then one
//! integer per grid, block or cluster tag, then the dynamic shared memory
//! size; both spellings of the flag tags are accepted (`tir.*` before TVM
//! 0.26, `tirx.*` since).
#![forbid(unsafe_code)]

use crate::abi::DLDataType;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::value::dtype;
use std::fmt::Write as _;

/// One kernel's entry of the function table (TVM's `FunctionInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// The kernel's symbol in the device code.
    pub name: String,
    /// The kernel's argument types, in order.
    pub arg_types: Vec<DLDataType>,
    /// Launch parameter tags (`blockIdx.x`, `threadIdx.x`, flags).
    pub launch_param_tags: Vec<String>,
    /// Per-argument extra tags (TVM's `ArgExtraTags`: 0 none, 1 tensor map).
    pub arg_extra_tags: Vec<i32>,
}

/// A decoded CUDA module blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaBlob {
    /// The format TVM recorded (not trusted: see `device_code::sniff`).
    pub fmt: String,
    /// The function table, in the order it was written.
    pub functions: Vec<(String, FunctionInfo)>,
    /// The device code.
    pub code: Vec<u8>,
}

/// `ArgExtraTags::kTensorMap`: the argument is a `CUtensorMap` passed by
/// address.
pub const TENSOR_MAP_TAG: i32 = 1;

/// How one kernel argument is handed to the driver (TVM's
/// `ArgConvertCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// `int64`: the 8 bytes of the packed integer.
    I64,
    /// `int32`: the packed integer truncated to 4 bytes.
    I32,
    /// `uint32`: the packed integer truncated to 4 bytes.
    U32,
    /// `float32`: the packed double narrowed.
    F32,
    /// `float64`: the 8 bytes of the packed double.
    F64,
    /// `handle`: a device pointer.
    Handle,
    /// A `CUtensorMap` the packed pointer points to.
    TensorMap,
}

impl ArgKind {
    /// The C type the kernel declares for this argument.
    pub fn c_type(self) -> &'static str {
        match self {
            ArgKind::I64 => "int64_t",
            ArgKind::I32 => "int32_t",
            ArgKind::U32 => "uint32_t",
            ArgKind::F32 => "float",
            ArgKind::F64 => "double",
            ArgKind::Handle => "void*",
            ArgKind::TensorMap => "CUtensorMap",
        }
    }
    /// The size of the kernel parameter in bytes.
    pub fn param_size(self) -> usize {
        match self {
            ArgKind::I32 | ArgKind::U32 | ArgKind::F32 => 4,
            ArgKind::I64 | ArgKind::F64 | ArgKind::Handle => 8,
            ArgKind::TensorMap => 128,
        }
    }
}

/// A kernel's launch parameter tags, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchTags {
    /// For each launch integer of the packed call, where it goes:
    /// `rank * 3 + axis`, rank 0 grid, 1 block, 2 cluster, 3 preferred
    /// cluster.
    pub dims: Vec<u8>,
    /// One more integer after the dimensions: the dynamic shared memory size.
    pub dyn_shared_memory: bool,
    /// Launch with programmatic stream serialization.
    pub programmatic_dependent_launch: bool,
    /// Launch cooperatively.
    pub cooperative: bool,
    /// Launch with the kernel's compile-time block dimension.
    pub required_block_dimension: bool,
    /// A cluster dimension tag is present.
    pub cluster_launch: bool,
}

const DYN_SHARED: &str = "use_dyn_shared_memory";
const PDL: &str = "use_programtic_dependent_launch";
const COOPERATIVE: &str = "use_cooperative_launch";
const REQUIRED_BLOCK: &str = "use_required_block_dimension";
const DIM_PREFIXES: [&str; 4] = [
    "blockIdx.",
    "threadIdx.",
    "clusterCtaIdx.",
    "preferredClusterCtaIdx.",
];

/// The flag name of `tag` (`tirx.x` or `tir.x` gives `x`).
fn flag_name(tag: &str) -> Option<&str> {
    tag.strip_prefix("tirx.")
        .or_else(|| tag.strip_prefix("tir."))
}

impl LaunchTags {
    /// Reads the tags of kernel `name`; an unknown tag, or the dynamic
    /// shared memory tag anywhere but last, is an error.
    pub fn parse(name: &str, tags: &[String]) -> Result<LaunchTags> {
        let mut out = LaunchTags::default();
        for (i, tag) in tags.iter().enumerate() {
            match flag_name(tag) {
                Some(DYN_SHARED) if i + 1 == tags.len() => out.dyn_shared_memory = true,
                Some(DYN_SHARED) => {
                    return Err(Error::value(format!(
                        "kernel {name}: the launch tag {tag} must be the last tag"
                    )));
                }
                Some(PDL) => out.programmatic_dependent_launch = true,
                Some(COOPERATIVE) => out.cooperative = true,
                Some(REQUIRED_BLOCK) => out.required_block_dimension = true,
                _ if tag.starts_with("vthread") || tag == "cthread" => {}
                _ => {
                    let dim = DIM_PREFIXES.iter().enumerate().find_map(|(rank, p)| {
                        let axis = tag.strip_prefix(p)?;
                        let axis = match axis {
                            "x" => 0,
                            "y" => 1,
                            "z" => 2,
                            _ => return None,
                        };
                        Some(rank as u8 * 3 + axis)
                    });
                    let dim = dim.ok_or_else(|| {
                        Error::value(format!("kernel {name}: unknown launch tag {tag:?}"))
                    })?;
                    out.cluster_launch |= (6..9).contains(&dim);
                    out.dims.push(dim);
                }
            }
        }
        Ok(out)
    }

    /// How many integers follow the kernel arguments in the packed call.
    pub fn count(&self) -> usize {
        self.dims.len() + usize::from(self.dyn_shared_memory)
    }

    /// The launch integers' names, in packed-call order.
    pub fn names(&self) -> Vec<String> {
        const RANKS: [&str; 4] = ["grid", "block", "cluster", "preferred_cluster"];
        let mut names: Vec<String> = self
            .dims
            .iter()
            .map(|&d| {
                format!(
                    "{}.{}",
                    RANKS[usize::from(d / 3)],
                    ["x", "y", "z"][usize::from(d % 3)]
                )
            })
            .collect();
        if self.dyn_shared_memory {
            names.push("dyn_shared_memory_bytes".into());
        }
        names
    }
}

impl FunctionInfo {
    /// How each argument reaches the driver; an argument type a kernel
    /// cannot take is an error naming it.
    pub fn arg_kinds(&self) -> Result<Vec<ArgKind>> {
        self.arg_types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if self.arg_extra_tags.get(i) == Some(&TENSOR_MAP_TAG) {
                    return Ok(ArgKind::TensorMap);
                }
                let kind = match (t.code, t.bits, t.lanes) {
                    (0, 64, 1) => Some(ArgKind::I64),
                    (0, 32, 1) => Some(ArgKind::I32),
                    (1, 32, 1) => Some(ArgKind::U32),
                    (2, 64, 1) => Some(ArgKind::F64),
                    (2, 32, 1) => Some(ArgKind::F32),
                    (3, _, 1) => Some(ArgKind::Handle),
                    _ => None,
                };
                kind.ok_or_else(|| {
                    Error::value(format!(
                        "kernel {}: argument {i} has type {}, which a kernel cannot take \
                         (int32, int64, uint32, float32, float64 or handle)",
                        self.name,
                        dtype::to_string(*t).unwrap_or_else(|_| format!("{t:?}"))
                    ))
                })
            })
            .collect()
    }

    /// The launch tags, read.
    pub fn launch_tags(&self) -> Result<LaunchTags> {
        LaunchTags::parse(&self.name, &self.launch_param_tags)
    }

    /// The packed call this kernel expects, as one line: the kernel's
    /// parameters, then the launch integers,
    /// `name(void*, void*, int32_t; grid.x, block.x)`.
    pub fn signature(&self) -> Result<String> {
        let kinds = self.arg_kinds()?;
        let tags = self.launch_tags()?;
        let mut out = format!("{}(", self.name);
        for (i, k) in kinds.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(out, "{sep}{}", k.c_type());
        }
        out.push_str("; ");
        out.push_str(&tags.names().join(", "));
        out.push(')');
        let flags: Vec<&str> = [
            (
                tags.programmatic_dependent_launch,
                "programmatic dependent launch",
            ),
            (tags.cooperative, "cooperative"),
            (tags.required_block_dimension, "required block dimension"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        if !flags.is_empty() {
            let _ = write!(out, " [{}]", flags.join(", "));
        }
        Ok(out)
    }
}

/// A reader over a blob that never reads or allocates past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<&'a [u8]> {
        let left = self.bytes.len() - self.pos;
        if n > left as u64 {
            return Err(Error::value(format!(
                "CUDA module blob cut short: {} needs {n} bytes at offset {}, {left} left",
                what(),
                self.pos
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(out)
    }
    fn u64(&mut self, what: &dyn Fn() -> String) -> Result<u64> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    /// A count of items at least `min_size` bytes each, checked against
    /// what is left.
    fn count(&mut self, min_size: u64, what: &dyn Fn() -> String) -> Result<usize> {
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(min_size) > left {
            return Err(Error::value(format!(
                "CUDA module blob: {} claims {n} items, more than the {left} bytes left hold",
                what()
            )));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self, what: &dyn Fn() -> String) -> Result<&'a [u8]> {
        let n = self.u64(what)?;
        self.take(n, what)
    }
    fn string(&mut self, what: &dyn Fn() -> String) -> Result<String> {
        let b = self.bytes(what)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| Error::value(format!("CUDA module blob: {} is not UTF-8", what())))
    }
}

fn read_info(r: &mut Reader<'_>, key: &str) -> Result<FunctionInfo> {
    let at = |field: &str| format!("the {field} of kernel {key:?}");
    let name = r.string(&|| at("name"))?;
    let n = r.count(4, &|| at("arg_types"))?;
    let mut arg_types = Vec::with_capacity(n);
    for _ in 0..n {
        let b = r.take(4, &|| at("arg_types"))?;
        arg_types.push(DLDataType {
            code: b[0],
            bits: b[1],
            lanes: u16::from_le_bytes([b[2], b[3]]),
        });
    }
    let n = r.count(8, &|| at("launch_param_tags"))?;
    let mut launch_param_tags = Vec::with_capacity(n);
    for _ in 0..n {
        launch_param_tags.push(r.string(&|| at("launch_param_tags"))?);
    }
    let n = r.count(4, &|| at("arg_extra_tags"))?;
    let mut arg_extra_tags = Vec::with_capacity(n);
    for _ in 0..n {
        let b = r.take(4, &|| at("arg_extra_tags"))?;
        let tag = i32::from_le_bytes(b.try_into().expect("4 bytes"));
        if !(0..=TENSOR_MAP_TAG).contains(&tag) {
            return Err(Error::value(format!(
                "CUDA module blob: {} holds {tag}, not 0 (none) or 1 (tensor map)",
                at("arg_extra_tags")
            )));
        }
        arg_extra_tags.push(tag);
    }
    // An argument type or launch tag no launch can take is the kernel's
    // error, raised when it is looked up (as TVM does), not the blob's.
    Ok(FunctionInfo {
        name,
        arg_types,
        launch_param_tags,
        arg_extra_tags,
    })
}

/// Reads a CUDA module blob (see the module docs); the whole blob must be
/// used.
pub fn decode(bytes: &[u8]) -> Result<CudaBlob> {
    let mut r = Reader { bytes, pos: 0 };
    let fmt = r.string(&|| "the format".into())?;
    let n = r.count(8 * 6, &|| "the function table".into())?;
    let mut functions: Vec<(String, FunctionInfo)> = Vec::with_capacity(n);
    let mut seen = std::collections::HashSet::with_capacity(n);
    for i in 0..n {
        let key = r.string(&|| format!("the name of kernel {i}"))?;
        if !seen.insert(key.clone()) {
            return Err(Error::value(format!(
                "CUDA module blob: kernel {key:?} is listed twice"
            )));
        }
        let info = read_info(&mut r, &key)?;
        functions.push((key, info));
    }
    let code = r.bytes(&|| "the code".into())?.to_vec();
    if r.pos != bytes.len() {
        return Err(Error::value(format!(
            "CUDA module blob: {} bytes follow the code",
            bytes.len() - r.pos
        )));
    }
    Ok(CudaBlob {
        fmt,
        functions,
        code,
    })
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

/// Writes `blob` as TVM does; `encode(&decode(b)?) == b`.
pub fn encode(blob: &CudaBlob) -> Vec<u8> {
    let mut out = Vec::with_capacity(blob.code.len() + 256);
    put_bytes(&mut out, blob.fmt.as_bytes());
    out.extend_from_slice(&(blob.functions.len() as u64).to_le_bytes());
    for (key, info) in &blob.functions {
        put_bytes(&mut out, key.as_bytes());
        put_bytes(&mut out, info.name.as_bytes());
        out.extend_from_slice(&(info.arg_types.len() as u64).to_le_bytes());
        for t in &info.arg_types {
            out.extend_from_slice(&[t.code, t.bits]);
            out.extend_from_slice(&t.lanes.to_le_bytes());
        }
        out.extend_from_slice(&(info.launch_param_tags.len() as u64).to_le_bytes());
        for tag in &info.launch_param_tags {
            put_bytes(&mut out, tag.as_bytes());
        }
        out.extend_from_slice(&(info.arg_extra_tags.len() as u64).to_le_bytes());
        for tag in &info.arg_extra_tags {
            out.extend_from_slice(&tag.to_le_bytes());
        }
    }
    put_bytes(&mut out, &blob.code);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CudaBlob {
        let f32t = DLDataType {
            code: 2,
            bits: 32,
            lanes: 1,
        };
        let h = DLDataType {
            code: 3,
            bits: 64,
            lanes: 1,
        };
        let i32t = DLDataType {
            code: 0,
            bits: 32,
            lanes: 1,
        };
        CudaBlob {
            fmt: "ptx".into(),
            functions: vec![(
                "k".into(),
                FunctionInfo {
                    name: "k".into(),
                    arg_types: vec![h, h, i32t, f32t],
                    launch_param_tags: vec![
                        "blockIdx.x".into(),
                        "threadIdx.x".into(),
                        "tir.use_dyn_shared_memory".into(),
                    ],
                    arg_extra_tags: vec![0, 0, 0, 0],
                },
            )],
            code: b".version 8.0\n".to_vec(),
        }
    }

    #[test]
    fn round_trip_and_signature() {
        let blob = sample();
        let bytes = encode(&blob);
        assert_eq!(decode(&bytes).unwrap(), blob);
        let info = &blob.functions[0].1;
        assert_eq!(
            info.signature().unwrap(),
            "k(void*, void*, int32_t, float; grid.x, block.x, dyn_shared_memory_bytes)"
        );
        assert_eq!(info.launch_tags().unwrap().count(), 3);
    }

    #[test]
    fn every_cut_is_an_error() {
        let bytes = encode(&sample());
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "cut at {n}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(
            decode(&long)
                .unwrap_err()
                .to_string()
                .contains("1 bytes follow")
        );
    }

    #[test]
    fn hostile_counts_allocate_nothing() {
        let mut bytes = encode(&sample());
        // The function table's count: 2^40.
        bytes[11..19].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = decode(&bytes).unwrap_err().to_string();
        assert!(
            e.contains("function table claims 1099511627776 items"),
            "{e}"
        );
        let mut bytes = encode(&sample());
        let code_len_at = bytes.len() - 13 - 8;
        bytes[code_len_at..code_len_at + 8].copy_from_slice(&14u64.to_le_bytes());
        let e = decode(&bytes).unwrap_err().to_string();
        assert!(e.contains("the code needs 14 bytes"), "{e}");
    }

    #[test]
    fn bad_tags_are_named_by_the_kernel_not_the_blob() {
        let kernel_error = |blob: &CudaBlob| {
            let decoded = decode(&encode(blob)).expect("the blob itself is whole");
            let info = &decoded.functions[0].1;
            info.launch_tags()
                .and_then(|_| info.arg_kinds())
                .unwrap_err()
                .to_string()
        };
        let mut blob = sample();
        blob.functions[0].1.launch_param_tags = vec!["warpIdx.x".into()];
        let e = kernel_error(&blob);
        assert!(e.contains("unknown launch tag \"warpIdx.x\""), "{e}");
        let mut blob = sample();
        blob.functions[0].1.launch_param_tags =
            vec!["tirx.use_dyn_shared_memory".into(), "blockIdx.x".into()];
        assert!(kernel_error(&blob).contains("must be the last tag"));
        let mut blob = sample();
        blob.functions[0].1.arg_types[0] = DLDataType {
            code: 2,
            bits: 16,
            lanes: 1,
        };
        let e = kernel_error(&blob);
        assert!(e.contains("argument 0 has type float16"), "{e}");
    }
}
