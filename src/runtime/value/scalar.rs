//! Shape and BigInt objects: a cell after the header and the data in place.
//!
//! * Shape: `{TVMFFIObject, TVMFFIShapeCell{data, size}, int64 dims[size]}`.
//! * BigInt: `{TVMFFIObject, size_t nwords, int64 words[nwords]}`, words
//!   least significant first, minimal two's complement; values that fit in
//!   an int64 are never BigInt objects but `kTVMFFIInt`.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{
    Cell, INITIAL_REF_COUNT, ObjectRef, alloc_in_place, cell_at, delete_plain_in_place,
    free_in_place,
};
use core::sync::atomic::AtomicU64;

/// Header plus a 16-byte-or-smaller cell, followed by `n` int64 words.
#[repr(C)]
struct Inline<C> {
    header: TVMFFIObject,
    cell: C,
}

/// The bytes of an `Inline<C>` followed by `words` int64s (`None` if that
/// overflows).
fn inline_size<C>(words: usize) -> Option<usize> {
    words.checked_mul(8)?.checked_add(size_of::<Inline<C>>())
}

/// Allocates `Inline<C>` + `n` int64s, the words `word(0..n)` in order; the
/// first error frees the allocation and is returned. `cell` makes the cell
/// given the address of the words. Nothing to destroy: the plain deleter.
fn try_new_inline<C, E>(
    type_index: i32,
    n: usize,
    mut word: impl FnMut(usize) -> core::result::Result<i64, E>,
    cell: impl FnOnce(*const i64) -> C,
) -> core::result::Result<ObjectRef, E> {
    let mem = alloc_in_place(inline_size::<C>(n), false);
    let obj = mem.cast::<Inline<C>>();
    // SAFETY: the allocation holds the header, the cell and `n` int64s right
    // after them (8-aligned); it is freed unpublished on an error, and
    // complete with one reference otherwise.
    unsafe {
        let data = mem.as_ptr().add(size_of::<Inline<C>>()).cast::<i64>();
        for i in 0..n {
            match word(i) {
                Ok(w) => data.add(i).write(w),
                Err(e) => {
                    free_in_place(mem.as_ptr().cast());
                    return Err(e);
                }
            }
        }
        obj.as_ptr().write(Inline {
            header: TVMFFIObject {
                combined_ref_count: AtomicU64::new(INITIAL_REF_COUNT),
                type_index,
                __padding: 0,
                deleter: Some(delete_plain_in_place),
            },
            cell: cell(data),
        });
        Ok(ObjectRef::from_raw(obj.cast()))
    }
}

/// [`try_new_inline`] of the given words.
fn new_inline<C>(type_index: i32, words: &[i64], cell: impl FnOnce(*const i64) -> C) -> ObjectRef {
    let made = try_new_inline(
        type_index,
        words.len(),
        |i| Ok::<_, core::convert::Infallible>(words[i]),
        cell,
    );
    match made {
        Ok(obj) => obj,
    }
}

/// The cell of a BigInt: its word count; the words follow it.
#[repr(C)]
struct BigIntCell {
    words: usize,
}

// SAFETY: BigInts, ours (`big_int_from_words`) and the reference's, keep
// their word count after the header; immutable.
unsafe impl Cell for BigIntCell {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIBigInt
    }
}

/// Makes a Shape object with the given dimensions.
pub fn new_shape(dims: &[i64]) -> ObjectRef {
    new_inline(kTVMFFIShape, dims, |data| TVMFFIShapeCell {
        data,
        size: dims.len(),
    })
}

/// Makes a Shape of `n` dimensions `dim(0..n)`, written in place (no
/// intermediate buffer); the first error is returned.
pub fn try_new_shape(n: usize, dim: impl FnMut(usize) -> Result<i64>) -> Result<ObjectRef> {
    try_new_inline(kTVMFFIShape, n, dim, |data| TVMFFIShapeCell {
        data,
        size: n,
    })
}

/// The dimensions of a Shape object (ours or foreign).
pub fn shape_dims(obj: &ObjectRef) -> Option<&[i64]> {
    let cell = obj.cell::<TVMFFIShapeCell>()?;
    Some(if cell.size == 0 {
        &[]
    } else {
        // SAFETY: the cell describes dimensions alive as long as the object.
        unsafe { core::slice::from_raw_parts(cell.data, cell.size) }
    })
}

/// Makes an integer from little-endian two's-complement 64-bit words:
/// `kTVMFFIInt` when it fits, else a minimal BigInt object.
pub fn big_int_from_words(words: &[i64]) -> Any {
    let mut n = words.len();
    while n > 1 && words[n - 1] == if words[n - 2] < 0 { -1 } else { 0 } {
        n -= 1;
    }
    if n <= 1 {
        return Any::from(words.first().copied().unwrap_or(0));
    }
    let words = &words[..n];
    Any::from(new_inline(kTVMFFIBigInt, words, |_| BigIntCell {
        words: words.len(),
    }))
}

/// Makes an integer from the raw bytes of its words.
pub fn big_int_from_bytes(bytes: &[u8]) -> Result<Any> {
    if !bytes.len().is_multiple_of(8) {
        return Err(Error::value(
            "BigInt content must contain whole 64-bit words",
        ));
    }
    let words: Vec<i64> = bytes
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok(big_int_from_words(&words))
}

/// The words of an integer value: the int64 itself, or a BigInt's words.
pub fn big_int_words<'a>(value: AnyView<'a>) -> Option<&'a [i64]> {
    let raw: &'a TVMFFIAny = value.raw();
    match raw.type_index {
        // SAFETY: ints store `v_int64`.
        kTVMFFIInt => Some(core::slice::from_ref(unsafe { &raw.value.v_int64 })),
        kTVMFFIBigInt => {
            let obj = value.as_object_ptr()?;
            // SAFETY: the view keeps the object alive for `'a`.
            let cell = unsafe { cell_at::<BigIntCell>(obj) }.ok()?;
            // SAFETY: the count is followed by that many words, alive as long
            // as the object (the pointer has the object's provenance).
            unsafe {
                let n = cell.as_ref().words;
                Some(core::slice::from_raw_parts(
                    cell.add(1).cast::<i64>().as_ptr(),
                    n,
                ))
            }
        }
        _ => None,
    }
}

/// The magnitude words (little endian) and sign of a two's complement value.
fn magnitude(words: &[i64]) -> (bool, Vec<u64>) {
    let negative = words.last().is_some_and(|&w| w < 0);
    let mut mag: Vec<u64> = words.iter().map(|&w| w as u64).collect();
    if negative {
        let mut carry = 1u64;
        for w in &mut mag {
            let (v, c) = (!*w).overflowing_add(carry);
            *w = v;
            carry = u64::from(c);
        }
    }
    while mag.last() == Some(&0) {
        mag.pop();
    }
    (negative, mag)
}

/// The decimal text of a big integer.
pub fn big_int_to_string(words: &[i64]) -> String {
    let (negative, mut mag) = magnitude(words);
    if mag.is_empty() {
        return "0".into();
    }
    let mut digits = Vec::new();
    while !mag.is_empty() {
        let mut rem = 0u128;
        for w in mag.iter_mut().rev() {
            let cur = (rem << 64) | u128::from(*w);
            *w = (cur / 10) as u64;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
        while mag.last() == Some(&0) {
            mag.pop();
        }
    }
    if negative {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).expect("ASCII digits")
}

/// Three-way comparison of two big integers (two's complement words).
pub fn big_int_compare(a: &[i64], b: &[i64]) -> i32 {
    let (na, ma) = magnitude(a);
    let (nb, mb) = magnitude(b);
    let sign = |n: bool, m: &Vec<u64>| {
        if m.is_empty() {
            0
        } else if n {
            -1
        } else {
            1
        }
    };
    let (sa, sb) = (sign(na, &ma), sign(nb, &mb));
    if sa != sb {
        return if sa < sb { -1 } else { 1 };
    }
    let by_magnitude = ma
        .len()
        .cmp(&mb.len())
        .then_with(|| ma.iter().rev().cmp(mb.iter().rev()));
    let c = by_magnitude as i32;
    if sa < 0 { -c } else { c }
}

/// `BigInt::hash()`: the int itself, or the hash of the words' bytes.
pub fn big_int_hash(words: &[i64]) -> u64 {
    match words {
        [w] => *w as u64,
        _ => {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            crate::runtime::value::hash::hash_bytes(&bytes)
        }
    }
}

/// Parses a decimal integer (optional `-`, digits only) into an integer
/// value; None for anything else.
pub fn big_int_from_decimal(text: &[u8]) -> Option<Any> {
    // An optional sign, then at least one digit (the reference's
    // `operator>>`: "+0007" reads 7, "-0" reads 0, "+" alone is refused).
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // 19 digits at a time (10^19 < 2^64): a long text costs a 19th of the
    // digit-at-a-time passes over the magnitude.
    let mut mag: Vec<u64> = vec![0];
    for chunk in digits.chunks(19) {
        let scale = 10u128.pow(chunk.len() as u32);
        let mut carry = chunk
            .iter()
            .fold(0u128, |acc, &d| acc * 10 + u128::from(d - b'0'));
        for w in &mut mag {
            let cur = u128::from(*w) * scale + carry;
            *w = cur as u64;
            carry = cur >> 64;
        }
        if carry != 0 {
            mag.push(carry as u64);
        }
    }
    mag.push(0); // room for the sign bit
    if negative {
        let mut carry = 1u64;
        for w in &mut mag {
            let (v, c) = (!*w).overflowing_add(carry);
            *w = v;
            carry = u64::from(c);
        }
    }
    let words: Vec<i64> = mag.into_iter().map(|w| w as i64).collect();
    Some(big_int_from_words(&words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_int_text_and_order() {
        assert_eq!(big_int_to_string(&[5]), "5");
        assert_eq!(big_int_to_string(&[-1]), "-1");
        assert_eq!(big_int_to_string(&[0, 1]), "18446744073709551616");
        assert_eq!(big_int_to_string(&[0, -1]), "-18446744073709551616");
        assert_eq!(big_int_compare(&[0, 1], &[i64::MAX]), 1);
        assert_eq!(big_int_compare(&[0, -1], &[i64::MIN]), -1);
        assert_eq!(big_int_compare(&[3], &[3]), 0);
    }

    #[test]
    fn big_int_decimal_round_trip() {
        for text in [
            "0",
            "-1",
            "18446744073709551616",
            "-18446744073709551616",
            "9223372036854775807",
        ] {
            let v = big_int_from_decimal(text.as_bytes()).unwrap();
            assert_eq!(big_int_to_string(big_int_words(v.view()).unwrap()), text);
        }
        assert!(big_int_from_decimal(b"1x").is_none());
        assert!(big_int_from_decimal(b"").is_none());
    }

    #[test]
    fn big_int_decimal_signs_and_chunks() {
        let read = |t: &str| {
            big_int_from_decimal(t.as_bytes())
                .map(|v| big_int_to_string(big_int_words(v.view()).unwrap()))
        };
        assert_eq!(read("+0007").as_deref(), Some("7"));
        assert_eq!(read("-0").as_deref(), Some("0"));
        for bad in ["+", "-", "+-1", " 1", "1 "] {
            assert_eq!(read(bad), None, "{bad:?}");
        }
        // Across the 19-digit chunks: 2^128, 10^38 - 1, and a 60-digit value.
        let long = "123456789012345678901234567890123456789012345678901234567890";
        for text in [
            "340282366920938463463374607431768211456",
            "99999999999999999999999999999999999999",
            long,
        ] {
            assert_eq!(read(text).as_deref(), Some(text));
            assert_eq!(read(&format!("-{text}")), Some(format!("-{text}")));
        }
    }
}
