//! The constants format (`format: "params"`): named tensors serialized apart
//! from the code that uses them, read back without copying.
//!
//! Version 1. All integers are little-endian; offsets count from the start
//! of the content.
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `TVMFFIPR` |
//! | 4 | format version (`u32`, 1) |
//! | 4 | number of tensors `n` (`u32`) |
//! | … | `n` entries, in name order (below) |
//! | … | the tensors' data, each at its offset, zero padding between |
//!
//! An entry: name length (`u32`), the name (UTF-8, non-empty), dtype code
//! (`u8`), bits (`u8`), lanes (`u16`), `ndim` (`u32`), `ndim` dimensions
//! (`i64`, none negative), data offset (`u64`, a multiple of
//! [`DATA_ALIGNMENT`]) and data size in bytes (`u64`, the compact row-major
//! size of that dtype and shape).
//!
//! Every data block is [`DATA_ALIGNMENT`]-byte aligned relative to the
//! start of the content, so a tensor is aligned in memory when the content
//! is (blobs this library writes into libraries are).
#![forbid(unsafe_code)]

use crate::abi::DLDataType;
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::value::tensor::compact_byte_size;

/// The magic bytes that start the format.
pub const MAGIC: &[u8; 8] = b"TVMFFIPR";
/// The format version this library writes and reads.
pub const VERSION: u32 = 1;
/// Alignment of every data block, relative to the start of the content.
pub const DATA_ALIGNMENT: u64 = 64;
/// The most dimensions a tensor may declare (as DLPack producers do).
const MAX_NDIM: u32 = 64;

/// One tensor's record: where its bytes lie in the content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The constant's name.
    pub name: String,
    /// Its element type.
    pub dtype: DLDataType,
    /// Its dimensions.
    pub shape: Vec<i64>,
    /// Where its data starts.
    pub offset: u64,
    /// Its data size in bytes.
    pub size: u64,
}

/// Serializes named tensors (name, dtype, shape, compact bytes), sorted by
/// name. Names must be unique and non-empty.
pub fn encode(tensors: &[(&str, DLDataType, &[i64], &[u8])]) -> Result<Vec<u8>> {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by_key(|&i| tensors[i].0);
    let count = u32::try_from(tensors.len())
        .map_err(|_| Error::value("too many constants for the params format"))?;
    let mut header_len = 16u64;
    if let Some(w) = order
        .windows(2)
        .find(|w| tensors[w[0]].0 == tensors[w[1]].0)
    {
        return Err(Error::value(format!(
            "duplicate constant name \"{}\"",
            tensors[w[0]].0
        )));
    }
    for &(name, dtype, shape, bytes) in tensors {
        if name.is_empty() {
            return Err(Error::value("a constant has an empty name"));
        }
        let expected = data_size(name, dtype, shape).map_err(Error::value)?;
        if expected != bytes.len() as u64 {
            return Err(Error::value(format!(
                "constant \"{name}\" holds {} bytes, not the {expected} of its dtype and shape",
                bytes.len()
            )));
        }
        header_len += 4 + name.len() as u64 + 4 + 4 + 8 * shape.len() as u64 + 16;
    }
    // The whole blob is reserved up front, fallibly: constants the caller
    // sizes (a mapped terabyte) are a MemoryError, not an abort.
    let total = tensors.iter().try_fold(
        header_len.next_multiple_of(DATA_ALIGNMENT),
        |end, &(_, _, _, bytes)| {
            end.checked_add(bytes.len() as u64)
                .map(|e| e.next_multiple_of(DATA_ALIGNMENT))
        },
    );
    let mut out = Vec::new();
    total
        .and_then(|t| usize::try_from(t).ok())
        .and_then(|t| out.try_reserve_exact(t).ok())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::MemoryError,
                format!(
                    "cannot allocate {} bytes for the params blob of {count} constant(s)",
                    total.map_or_else(|| "more than 2^64".to_string(), |t| t.to_string())
                ),
            )
        })?;
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    let mut offset = header_len.next_multiple_of(DATA_ALIGNMENT);
    for &i in &order {
        let (name, dtype, shape, bytes) = tensors[i];
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&[dtype.code, dtype.bits]);
        out.extend_from_slice(&dtype.lanes.to_le_bytes());
        out.extend_from_slice(&(shape.len() as u32).to_le_bytes());
        for d in shape {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        offset = (offset + bytes.len() as u64).next_multiple_of(DATA_ALIGNMENT);
    }
    for &i in &order {
        let bytes = tensors[i].3;
        out.resize(out.len().next_multiple_of(DATA_ALIGNMENT as usize), 0);
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

/// A bounds-checked little-endian reader.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                malformed(
                    self.at,
                    &format!(
                        "{what} needs {n} bytes but only {} remain",
                        self.bytes.len() - self.at
                    ),
                )
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        Ok(self.take(N, what)?.try_into().expect("N bytes"))
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        self.array(what).map(u32::from_le_bytes)
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        self.array(what).map(u64::from_le_bytes)
    }
}

/// The bytes a constant of `dtype` and `shape` holds, compact and row
/// major. Its dtype must give every element bytes (no zero lanes, no
/// zero-bit type: a shape over empty data would pass for any shape), its
/// dimensions none negative, and the size fit in 64 bits; the error names
/// the constant.
fn data_size(name: &str, dtype: DLDataType, shape: &[i64]) -> std::result::Result<u64, String> {
    if dtype.lanes == 0 || dtype.bits == 0 {
        return Err(format!(
            "constant \"{name}\" has a dtype of {} bits and {} lanes: its elements hold no bytes",
            dtype.bits, dtype.lanes
        ));
    }
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(format!("constant \"{name}\" has a negative dimension {d}"));
    }
    compact_byte_size(dtype, shape).ok_or_else(|| {
        format!("constant \"{name}\": the size of shape {shape:?} overflows 64 bits")
    })
}

/// The error for malformed content at byte `at`.
fn malformed(at: usize, what: &str) -> Error {
    Error::value(format!("malformed params content at byte {at}: {what}"))
}

/// Reads the entries of params content, checking every field and that each
/// data block lies within `bytes`. Never reads past the end, whatever the
/// bytes.
pub fn decode(bytes: &[u8]) -> Result<Vec<Entry>> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(8, "the magic")? != MAGIC {
        return Err(malformed(0, "not params content (bad magic)"));
    }
    let version = r.u32("the version")?;
    if version != VERSION {
        return Err(malformed(
            8,
            &format!("format version {version}; this library reads version {VERSION}"),
        ));
    }
    let count = r.u32("the tensor count")?;
    // Each entry takes at least 36 bytes: a hostile count fails here, not
    // in an allocation.
    if u64::from(count) * 36 > bytes.len() as u64 {
        return Err(malformed(12, &format!("{count} tensors cannot fit")));
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count as usize);
    let mut names = std::collections::HashSet::new();
    for _ in 0..count {
        let at = r.at;
        let len = r.u32("a name length")? as usize;
        let name = core::str::from_utf8(r.take(len, "a name")?)
            .map_err(|_| malformed(at, "a name is not UTF-8"))?;
        if name.is_empty() {
            return Err(malformed(at, "a constant has an empty name"));
        }
        if !names.insert(name) {
            return Err(malformed(
                at,
                &format!("duplicate constant name \"{name}\""),
            ));
        }
        let [code, bits, l0, l1] = r.array::<4>("a dtype")?;
        let dtype = DLDataType {
            code,
            bits,
            lanes: u16::from_le_bytes([l0, l1]),
        };
        let ndim = r.u32("ndim")?;
        if ndim > MAX_NDIM {
            return Err(malformed(
                at,
                &format!("constant \"{name}\" declares {ndim} dimensions"),
            ));
        }
        let mut shape = Vec::with_capacity(ndim as usize);
        for _ in 0..ndim {
            shape.push(i64::from_le_bytes(r.array("a dimension")?));
        }
        let (offset, size) = (r.u64("a data offset")?, r.u64("a data size")?);
        let expected = data_size(name, dtype, &shape).map_err(|e| malformed(at, &e))?;
        if expected != size {
            return Err(malformed(
                at,
                &format!(
                    "constant \"{name}\" declares {size} bytes, not the {expected} of its dtype and shape"
                ),
            ));
        }
        if offset % DATA_ALIGNMENT != 0 {
            return Err(malformed(
                at,
                &format!("constant \"{name}\" data offset {offset} is not aligned"),
            ));
        }
        if offset
            .checked_add(size)
            .is_none_or(|end| end > bytes.len() as u64)
        {
            return Err(malformed(
                at,
                &format!(
                    "constant \"{name}\" data (bytes {offset}+{size}) lies beyond the end ({})",
                    bytes.len()
                ),
            ));
        }
        entries.push(Entry {
            name: name.to_owned(),
            dtype,
            shape,
            offset,
            size,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: DLDataType = DLDataType {
        code: 2,
        bits: 32,
        lanes: 1,
    };

    #[test]
    fn round_trip_aligned_and_every_truncation_refused() {
        let a: Vec<u8> = (0..24).collect();
        let b = [7u8; 4];
        let bytes = encode(&[("w", F32, &[2, 3], &a), ("b", F32, &[1], &b)]).unwrap();
        let entries = decode(&bytes).unwrap();
        assert_eq!(
            entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["b", "w"]
        );
        for e in &entries {
            assert_eq!(e.offset % DATA_ALIGNMENT, 0);
        }
        let w = &entries[1];
        assert_eq!(&bytes[w.offset as usize..][..24], &a[..]);
        for cut in 0..bytes.len() - 1 {
            if let Ok(e) = decode(&bytes[..cut]) {
                panic!("{cut} bytes decoded as {e:?}");
            }
        }
        assert_eq!(
            encode(&[("w", F32, &[2], &a)]).unwrap_err().to_string(),
            "ValueError: constant \"w\" holds 24 bytes, not the 8 of its dtype and shape"
        );
        assert_eq!(
            encode(&[("w", F32, &[1], &b), ("w", F32, &[1], &b)])
                .unwrap_err()
                .to_string(),
            "ValueError: duplicate constant name \"w\""
        );
    }

    #[test]
    fn hostile_headers_are_errors() {
        let mut bytes = encode(&[("w", F32, &[1], &[0u8; 4])]).unwrap();
        bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            decode(&bytes)
                .unwrap_err()
                .to_string()
                .contains("cannot fit")
        );
        let mut bytes = encode(&[("w", F32, &[1], &[0u8; 4])]).unwrap();
        // The dimension: 2^62 elements of 4 bytes overflow.
        bytes[29..37].copy_from_slice(&(1i64 << 62).to_le_bytes());
        assert!(
            decode(&bytes)
                .unwrap_err()
                .to_string()
                .contains("constant \"w\": the size of shape [4611686018427387904] overflows")
        );
    }

    #[test]
    fn constants_agree_with_their_bytes() {
        let zero_lanes = DLDataType { lanes: 0, ..F32 };
        let zero_bits = DLDataType { bits: 0, ..F32 };
        for (dtype, shape, bytes, needle) in [
            (zero_lanes, &[1000i64][..], &[][..], "0 lanes"),
            (zero_bits, &[1000][..], &[][..], "0 bits"),
            (F32, &[-1][..], &[][..], "negative dimension -1"),
            (F32, &[1 << 40, 1 << 40][..], &[][..], "overflows 64 bits"),
            (F32, &[2][..], &[0u8; 4][..], "holds 4 bytes, not the 8"),
        ] {
            let err = encode(&[("w", dtype, shape, bytes)])
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("ValueError: constant \"w\""), "{err}");
            assert!(err.contains(needle), "{err}");
        }
        // The same read back: the header says zero lanes over empty data.
        let mut bytes = encode(&[("w", F32, &[0], &[])]).unwrap();
        bytes[23..25].copy_from_slice(&0u16.to_le_bytes());
        bytes[29..37].copy_from_slice(&1000i64.to_le_bytes());
        let err = decode(&bytes).unwrap_err().to_string();
        assert!(
            err.contains("constant \"w\" has a dtype of 32 bits and 0 lanes"),
            "{err}"
        );
    }
}
