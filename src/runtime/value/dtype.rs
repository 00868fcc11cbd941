//! `DLDataType` ⇄ string, following the reference grammar exactly: `int8`,
//! `uint`, `float16x4`, `bfloat16`, `bool`, `handle`, `void` (or empty),
//! float8/6/4 variants with `fp8_`/`f8_` aliases, short forms (`i32`, `u8`,
//! `f16`, `bf16`), `xN` lanes, `xvscalexN` scalable vectors, `custom[name]`.
#![forbid(unsafe_code)]

use crate::abi::*;
use crate::runtime::call::registry;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};

/// First type code of custom (extension) data types.
const CUSTOM_BEGIN: u8 = 129;

/// The float8/6/4 variants: (name after the `floatN_` prefix, code, bits).
const FLOAT8: [(&str, u32); 8] = [
    ("e4m3b11fnuz", kDLFloat8_e4m3b11fnuz),
    ("e4m3fnuz", kDLFloat8_e4m3fnuz),
    ("e4m3fn", kDLFloat8_e4m3fn),
    ("e5m2fnuz", kDLFloat8_e5m2fnuz),
    ("e8m0fnu", kDLFloat8_e8m0fnu),
    ("e3m4", kDLFloat8_e3m4),
    ("e4m3", kDLFloat8_e4m3),
    ("e5m2", kDLFloat8_e5m2),
];
const FLOAT6: [(&str, u32); 2] = [("e2m3fn", kDLFloat6_e2m3fn), ("e3m2fn", kDLFloat6_e3m2fn)];

/// The name of a non-custom type code.
fn code_name(code: u8) -> Option<&'static str> {
    Some(match u32::from(code) {
        kDLInt => "int",
        kDLUInt => "uint",
        kDLFloat => "float",
        kDLOpaqueHandle => "handle",
        kDLBfloat => "bfloat",
        kDLBool => "bool",
        kDLFloat8_e3m4 => "float8_e3m4",
        kDLFloat8_e4m3 => "float8_e4m3",
        kDLFloat8_e4m3b11fnuz => "float8_e4m3b11fnuz",
        kDLFloat8_e4m3fn => "float8_e4m3fn",
        kDLFloat8_e4m3fnuz => "float8_e4m3fnuz",
        kDLFloat8_e5m2 => "float8_e5m2",
        kDLFloat8_e5m2fnuz => "float8_e5m2fnuz",
        kDLFloat8_e8m0fnu => "float8_e8m0fnu",
        kDLFloat6_e2m3fn => "float6_e2m3fn",
        kDLFloat6_e3m2fn => "float6_e3m2fn",
        kDLFloat4_e2m1fn => "float4_e2m1fn",
        _ => return None,
    })
}

/// Calls a global the custom-type hooks need (`dtype.get_custom_type_*`).
fn call_hook(
    name: &str,
    arg: crate::runtime::model::any::Any,
) -> Result<crate::runtime::model::any::Any> {
    let f = registry::get_global(name.as_bytes())
        .ok_or_else(|| Error::value(format!("Function {name} not found")))?;
    f.call(&[arg.view()])
}

/// Cached String objects of formatted data types, bounded so that a
/// stream of distinct (hostile) data types cannot grow it without limit.
static STRING_CACHE: std::sync::LazyLock<std::sync::RwLock<StringCache>> =
    std::sync::LazyLock::new(Default::default);

/// Strings by (code, bits, lanes).
type StringCache =
    std::collections::HashMap<(u8, u8, u16), crate::runtime::model::object::ObjectRef>;

/// The most data types whose strings are cached.
const STRING_CACHE_LIMIT: usize = 4096;

/// `TVMFFIDataTypeToString`: the formatted data type as a String object
/// (always a heap `ffi.String`, as the reference returns). One object per
/// data type is cached, so repeated calls allocate nothing. Custom types
/// are not cached: their names come from a registered hook that may change.
pub fn to_string_object(dtype: DLDataType) -> Result<crate::runtime::model::object::ObjectRef> {
    let key = (dtype.code, dtype.bits, dtype.lanes);
    let cacheable = dtype.code < CUSTOM_BEGIN;
    if cacheable {
        let cache = STRING_CACHE.read().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cache.get(&key) {
            return Ok(s.clone());
        }
    }
    let text = to_string(dtype)?;
    let obj = crate::runtime::model::string::new_text_object(
        text.as_bytes(),
        crate::runtime::model::string::TextKind::Str,
    );
    if cacheable {
        let mut cache = STRING_CACHE.write().unwrap_or_else(|e| e.into_inner());
        if cache.len() < STRING_CACHE_LIMIT {
            return Ok(cache.entry(key).or_insert(obj).clone());
        }
    }
    Ok(obj)
}

/// Formats a data type as the reference does (`bool`, `float32x4`, `handle`,
/// `` for void, `custom[name]8`).
pub fn to_string(dtype: DLDataType) -> Result<String> {
    if dtype.bits == 8 && dtype.lanes == 1 && u32::from(dtype.code) == kDLBool {
        return Ok("bool".into());
    }
    if u32::from(dtype.code) == kDLOpaqueHandle && dtype.lanes == 0 && dtype.bits == 0 {
        return Ok(String::new());
    }
    let mut out = if dtype.code >= CUSTOM_BEGIN {
        let name = call_hook(
            "dtype.get_custom_type_name",
            crate::runtime::model::any::Any::from(i64::from(dtype.code)),
        )?;
        let name = name
            .view()
            .as_str_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        format!(
            "custom[{}]",
            name.ok_or_else(|| Error::type_error("custom type name must be a str"))?
        )
    } else {
        code_name(dtype.code)
            .ok_or_else(|| {
                Error::value(format!(
                    "DLDataType contains unknown type_code={}",
                    dtype.code
                ))
            })?
            .to_string()
    };
    if u32::from(dtype.code) == kDLOpaqueHandle {
        return Ok(out);
    }
    let lanes = dtype.lanes as i16;
    if u32::from(dtype.code) < kDLFloat8_e3m4
        && (u32::from(dtype.code) != kDLBool || dtype.bits != 8)
    {
        out += &dtype.bits.to_string();
    }
    if lanes > 1 {
        out += &format!("x{lanes}");
    } else if lanes < -1 {
        out += &format!("xvscalex{}", -i32::from(lanes));
    }
    Ok(out)
}

/// A cursor over the dtype text.
struct Scan<'a> {
    text: &'a [u8],
    pos: usize,
    whole: &'a str,
}

impl Scan<'_> {
    fn unknown(&self) -> Error {
        Error::value(format!("unknown dtype `{}`", self.whole))
    }

    /// Decimal digits (wrapping like the reference's uint64 accumulator);
    /// values above `u32::MAX` are an error.
    fn digits(&mut self) -> Result<(u32, usize)> {
        let start = self.pos;
        let mut value = 0u64;
        while let Some(d) = self.text.get(self.pos).filter(|c| c.is_ascii_digit()) {
            value = value.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            self.pos += 1;
        }
        let value = u32::try_from(value).map_err(|_| {
            Error::value(format!(
                "Integer value in dtype string '{}' is out of range for uint32_t",
                String::from_utf8_lossy(&self.text[start..self.pos])
            ))
        })?;
        Ok((value, self.pos - start))
    }

    /// `xN` (or, if allowed, `xvscalexN`) lanes; 1 when absent.
    fn lanes(&mut self, allow_scalable: bool) -> Result<u16> {
        let mut negative = false;
        if allow_scalable && self.text[self.pos..].starts_with(b"xvscale") {
            negative = true;
            self.pos += 7;
        }
        if self.text.get(self.pos) != Some(&b'x') {
            return Ok(1);
        }
        self.pos += 1;
        let (value, count) = self.digits()?;
        if count == 0 || value == 0 {
            return Err(Error::value(format!(
                "Invalid lanes specification in dtype '{}'. Lanes must be a positive integer.",
                self.whole
            )));
        }
        if value > u32::from(u16::MAX) {
            return Err(Error::value(format!(
                "Lanes value {value} is out of range for uint16_t in dtype '{}'",
                self.whole
            )));
        }
        let lanes = value as u16;
        Ok(if negative {
            lanes.wrapping_neg()
        } else {
            lanes
        })
    }

    fn finish(&self) -> Result<()> {
        if self.pos == self.text.len() {
            Ok(())
        } else {
            Err(self.unknown())
        }
    }
}

/// Parses a float8/6/4 variant starting at `offset`.
fn parse_small_float(scan: &mut Scan<'_>, offset: usize, bits: u8) -> Result<DLDataType> {
    let table: &[(&str, u32)] = match bits {
        8 => &FLOAT8,
        6 => &FLOAT6,
        _ => &[("e2m1fn", kDLFloat4_e2m1fn)],
    };
    let underscore_lanes = bits == 4;
    let rest = &scan.text[offset..];
    for (name, code) in table {
        let Some(after) = rest.strip_prefix(name.as_bytes()) else {
            continue;
        };
        let next = after.first();
        if !(next.is_none() || next == Some(&b'x') || (underscore_lanes && next == Some(&b'_'))) {
            continue;
        }
        scan.pos = offset + name.len();
        if underscore_lanes && scan.text.get(scan.pos) == Some(&b'_') {
            scan.pos += 1;
        }
        let lanes = scan.lanes(false)?;
        scan.finish()?;
        return Ok(DLDataType {
            code: *code as u8,
            bits,
            lanes,
        });
    }
    Err(Error::value(format!(
        "unknown float{bits} type `{}`",
        scan.whole
    )))
}

/// The text of `dtype` for a serialized graph: [`to_string`], refused
/// (`ValueError`) when it would not read back as the same data type (zero
/// lanes, zero-bit floats), where the reference writes a text that reads
/// back as another type.
pub fn to_exact_string(dtype: DLDataType) -> Result<String> {
    let text = to_string(dtype)?;
    let back = from_string(text.as_bytes()).ok();
    let same =
        back.is_some_and(|b| (b.code, b.bits, b.lanes) == (dtype.code, dtype.bits, dtype.lanes));
    if !same {
        return Err(Error::value(format!(
            "DataType(code={}, bits={}, lanes={}) has no text form that reads back as itself (`{text}` does not)",
            dtype.code, dtype.bits, dtype.lanes
        )));
    }
    Ok(text)
}

/// The most common dtype names, answered from a table without allocating.
const COMMON: [&[u8]; 16] = [
    b"float32",
    b"float16",
    b"bfloat16",
    b"int64",
    b"int32",
    b"float64",
    b"int8",
    b"uint8",
    b"bool",
    b"int16",
    b"uint16",
    b"uint32",
    b"uint64",
    b"handle",
    b"float8_e4m3fn",
    b"float8_e5m2",
];

/// [`COMMON`], parsed once by the general parser (so both agree).
static COMMON_PARSED: std::sync::LazyLock<[DLDataType; 16]> = std::sync::LazyLock::new(|| {
    COMMON.map(|name| parse(name).expect("a common dtype name parses"))
});

/// Parses a dtype string.
pub fn from_string(text: &[u8]) -> Result<DLDataType> {
    match COMMON.iter().position(|&c| c == text) {
        Some(i) => Ok(COMMON_PARSED[i]),
        None => parse(text),
    }
}

/// The general dtype parser.
fn parse(text: &[u8]) -> Result<DLDataType> {
    if text.is_empty() || text == b"void" {
        return Ok(DLDataType {
            code: kDLOpaqueHandle as u8,
            bits: 0,
            lanes: 0,
        });
    }
    let original = String::from_utf8_lossy(text).into_owned();
    // Short aliases become the canonical prefix first (`i8` → `int8`).
    let digit_at = |i: usize| text.get(i).is_some_and(u8::is_ascii_digit);
    let normalized: Vec<u8> = if text[0] == b'i' && digit_at(1) {
        [b"int", &text[1..]].concat()
    } else if text[0] == b'u' && digit_at(1) {
        [b"uint", &text[1..]].concat()
    } else if text.starts_with(b"bf") && digit_at(2) {
        [b"bfloat", &text[2..]].concat()
    } else if let Some(rest) = text.strip_prefix(b"fp8_") {
        [b"float8_", rest].concat()
    } else if let Some(rest) = text.strip_prefix(b"fp6_") {
        [b"float6_", rest].concat()
    } else if let Some(rest) = text.strip_prefix(b"fp4_") {
        [b"float4_", rest].concat()
    } else if text[0] == b'f' && digit_at(1) {
        [b"float", &text[1..]].concat()
    } else {
        text.to_vec()
    };
    let whole = String::from_utf8_lossy(&normalized).into_owned();
    let mut scan = Scan {
        text: &normalized,
        pos: 0,
        whole: &whole,
    };
    let t = &normalized[..];
    let mut dtype = DLDataType {
        code: 0,
        bits: 32,
        lanes: 1,
    };
    if t.starts_with(b"int") {
        dtype.code = kDLInt as u8;
        scan.pos = 3;
    } else if t.starts_with(b"uint") {
        dtype.code = kDLUInt as u8;
        scan.pos = 4;
    } else if t.starts_with(b"bool") {
        dtype.code = kDLBool as u8;
        dtype.bits = 8;
        scan.pos = 4;
    } else if t.starts_with(b"f8_") {
        return parse_small_float(&mut scan, 3, 8);
    } else if t.starts_with(b"f6_") {
        return parse_small_float(&mut scan, 3, 6);
    } else if t.starts_with(b"f4_") {
        return parse_small_float(&mut scan, 3, 4);
    } else if t.starts_with(b"float8_") {
        return parse_small_float(&mut scan, 7, 8);
    } else if t.starts_with(b"float6_") {
        return parse_small_float(&mut scan, 7, 6);
    } else if t.starts_with(b"float4_") {
        return parse_small_float(&mut scan, 7, 4);
    } else if t.starts_with(b"float") {
        dtype.code = kDLFloat as u8;
        scan.pos = 5;
    } else if t.starts_with(b"handle") {
        dtype.code = kDLOpaqueHandle as u8;
        dtype.bits = 64;
        scan.pos = 6;
    } else if t.starts_with(b"bfloat") {
        dtype.code = kDLBfloat as u8;
        dtype.bits = 16;
        scan.pos = 6;
    } else if t.starts_with(b"custom") {
        dtype.code = parse_custom(&mut scan)?;
    } else {
        return Err(Error::value(format!("unknown dtype `{original}`")));
    }
    let (bits, _) = scan.digits()?;
    let bits = u8::try_from(bits).map_err(|_| {
        Error::value(format!(
            "Bits value {bits} is out of range for uint8_t in dtype '{whole}'"
        ))
    })?;
    if bits != 0 {
        dtype.bits = bits;
    }
    dtype.lanes = scan.lanes(true)?;
    scan.finish()?;
    Ok(dtype)
}

/// `custom[name]`: the code comes from the global `dtype.get_custom_type_code`.
fn parse_custom(scan: &mut Scan<'_>) -> Result<u8> {
    let rest = &scan.text[6..];
    if rest.first() != Some(&b'[') {
        return Err(Error::value(format!(
            "expected opening brace after 'custom' type in{}",
            scan.whole
        )));
    }
    let Some(close) = rest.iter().position(|&c| c == b']') else {
        return Err(Error::value(format!(
            "expected closing brace after 'custom' type in{}",
            scan.whole
        )));
    };
    let name = &rest[1..close];
    scan.pos = 6 + close + 1;
    let code = call_hook("dtype.get_custom_type_code", make_text(name, TextKind::Str))?;
    let code = code
        .view()
        .as_i64()
        .ok_or_else(|| Error::type_error("custom type code must be an int"))?;
    Ok(code as u8)
}

#[cfg(test)]
mod common_tests {
    use super::*;

    #[test]
    fn common_names_agree_with_the_parser() {
        for name in COMMON {
            let (a, b) = (from_string(name).unwrap(), parse(name).unwrap());
            assert_eq!((a.code, a.bits, a.lanes), (b.code, b.bits, b.lanes));
        }
        let f = from_string(b"f32").unwrap();
        assert_eq!((f.code, f.bits, f.lanes), (kDLFloat as u8, 32, 1));
        assert!(from_string(b"float33x").is_err());
    }
}
