//! `AnyHash` / `AnyEqual` exactly as the official C++ headers compute them.
//! C++ code compiled with those headers hashes and probes our maps by
//! itself, so every bit must agree: strings hash by content (small and heap
//! alike), other POD values and objects by their 64 bits, unless the type
//! registered `__any_hash__` / `__any_equal__` attributes.

use crate::abi::*;
use crate::runtime::model::any::{AnyView, is_object_index};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::cell_at;
use crate::runtime::model::string::{TextKind, str_bytes_of};
use crate::runtime::model::type_table;
use std::sync::LazyLock;

/// The columns C++ readers consult; they exist from start-up on.
struct Columns {
    hash: *const TVMFFITypeAttrColumn,
    equal: *const TVMFFITypeAttrColumn,
}
// SAFETY: the column records live (at fixed addresses) for the whole process.
unsafe impl Send for Columns {}
// SAFETY: see `Send`.
unsafe impl Sync for Columns {}

static COLUMNS: LazyLock<Columns> = LazyLock::new(|| Columns {
    hash: type_table::attr_column(b"__any_hash__"),
    equal: type_table::attr_column(b"__any_equal__"),
});

/// `StableHashCombine`.
#[inline]
pub fn hash_combine(key: u64, value: u64) -> u64 {
    key ^ value
        .wrapping_add(0x9e37_79b9)
        .wrapping_add(key << 6)
        .wrapping_add(key >> 2)
}

/// `StableHashBytes`: little-endian 8-byte words, then the zero-padded tail,
/// each folded as `(h * 1099511628211 + w) % 2147483647` with u64 wrapping.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    const MUL: u64 = 1_099_511_628_211;
    const MOD: u64 = 2_147_483_647;
    let fold = |h: u64, w: u64| h.wrapping_mul(MUL).wrapping_add(w) % MOD;
    let mut chunks = bytes.chunks_exact(8);
    let mut h = 0u64;
    for c in &mut chunks {
        h = fold(h, u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = fold(h, u64::from_le_bytes(word));
    }
    h
}

/// The entry of `column` for `type_index`, if set.
fn column_entry(column: *const TVMFFITypeAttrColumn, type_index: i32) -> Option<TVMFFIAny> {
    // SAFETY: the column record is valid for the process; its data array
    // holds `size` values (read afresh: it may move when it grows).
    let column = unsafe { column.as_ref() }?;
    let offset = type_index.checked_sub(column.begin_index)?;
    if offset < 0 || offset >= column.size || column.data.is_null() {
        return None;
    }
    // SAFETY: bounds checked above.
    let entry = unsafe { *column.data.add(offset as usize) };
    (entry.type_index != kTVMFFINone).then_some(entry)
}

/// Calls a custom hash/equal attribute: a C function pointer taking
/// `const Any&` arguments, or a Function.
fn call_custom(entry: TVMFFIAny, args: &[AnyView<'_>], expect: i32) -> Result<i64> {
    let result = if entry.type_index == kTVMFFIOpaquePtr {
        // SAFETY: registered as `TVMFFIAny (*)(const Any&...)`; `Any` is a
        // transparent `TVMFFIAny`, so the references are pointers to them.
        unsafe {
            let f = entry.value.v_ptr;
            match args {
                [a] => core::mem::transmute::<
                    *mut core::ffi::c_void,
                    unsafe extern "C" fn(*const TVMFFIAny) -> TVMFFIAny,
                >(f)(a.raw()),
                [a, b] => core::mem::transmute::<
                    *mut core::ffi::c_void,
                    unsafe extern "C" fn(*const TVMFFIAny, *const TVMFFIAny) -> TVMFFIAny,
                >(f)(a.raw(), b.raw()),
                _ => unreachable!("one or two arguments"),
            }
        }
    } else if entry.type_index == kTVMFFIFunction {
        // SAFETY: the column holds a live Function.
        let view = unsafe { AnyView::from_raw(&entry) };
        let f = view
            .to_object()
            .and_then(crate::runtime::call::function::Function::from_object);
        let f = f.ok_or_else(|| Error::runtime("custom hash/equal attribute is not callable"))?;
        f.call(args)?.into_raw()
    } else {
        return Err(Error::runtime(
            "custom hash/equal attribute is neither a function nor a pointer",
        ));
    };
    if result.type_index == expect {
        // SAFETY: ints and bools store `v_int64`.
        return Ok(unsafe { result.value.v_int64 });
    }
    if result.type_index == kTVMFFIError {
        // SAFETY: an owned Error object handed back by the callee.
        let err = unsafe { crate::runtime::model::any::Any::from_raw(result) };
        return Err(Error::object(
            err.view().to_object().expect("an error object"),
        ));
    }
    // SAFETY: an owned result we drop.
    drop(unsafe { crate::runtime::model::any::Any::from_raw(result) });
    Err(Error::runtime(
        "custom hash/equal attribute returned an unexpected type",
    ))
}

/// `AnyHash`.
pub fn any_hash(view: AnyView<'_>) -> Result<u64> {
    let value = view.raw();
    Ok(match value.type_index {
        // SAFETY: small text keeps its (zero-padded) bytes in `v_uint64`.
        kTVMFFISmallStr => hash_combine(
            kTVMFFIStr as u64,
            unsafe { value.value.v_uint64 } % 2_147_483_647,
        ),
        // SAFETY: as above.
        kTVMFFISmallBytes => hash_combine(
            kTVMFFIBytes as u64,
            unsafe { value.value.v_uint64 } % 2_147_483_647,
        ),
        kTVMFFIStr => hash_combine(
            kTVMFFIStr as u64,
            hash_bytes(str_bytes_of(view, TextKind::Str).unwrap_or(&[])),
        ),
        kTVMFFIBytes => hash_combine(
            kTVMFFIBytes as u64,
            hash_bytes(str_bytes_of(view, TextKind::Bytes).unwrap_or(&[])),
        ),
        t => {
            if is_object_index(t)
                && let Some(entry) = column_entry(COLUMNS.hash, t)
            {
                return Ok(hash_combine(
                    t as u64,
                    call_custom(entry, &[view], kTVMFFIInt)? as u64,
                ));
            }
            // SAFETY: every value has 8 bytes of payload.
            hash_combine(t as u64, unsafe { value.value.v_uint64 })
        }
    })
}

/// The bytes of a String/Bytes object value.
///
/// # Safety
/// `value` holds a live `kTVMFFIStr` or `kTVMFFIBytes` object.
#[inline]
unsafe fn heap_text(value: &TVMFFIAny) -> &[u8] {
    // SAFETY: per the contract, `v_obj` is a live (non-NULL) object.
    let obj = unsafe { core::ptr::NonNull::new_unchecked(value.value.v_obj) };
    // SAFETY: as above.
    match unsafe { cell_at::<TVMFFIByteArray>(obj) } {
        // SAFETY: the cell describes the object's own bytes, alive with it.
        Ok(cell) => unsafe { crate::runtime::model::bytes::byte_slice(*cell.as_ptr()) },
        Err(_) => &[],
    }
}

/// `AnyEqual` without custom attributes: None when the answer needs the
/// `__any_equal__` attribute of an object type.
///
/// # Safety
/// Both are valid values (live objects, readable strings).
#[inline]
unsafe fn quick_equal(lhs: &TVMFFIAny, rhs: &TVMFFIAny) -> Option<bool> {
    // SAFETY: both are valid 16-byte values; compare their raw bits.
    let bits = |a: &TVMFFIAny| unsafe { core::mem::transmute::<TVMFFIAny, [u64; 2]>(*a) };
    if bits(lhs) == bits(rhs) {
        return Some(true);
    }
    let (lt, rt) = (lhs.type_index, rhs.type_index);
    if lt == rt {
        if lt == kTVMFFIStr || lt == kTVMFFIBytes {
            // SAFETY: both are live String/Bytes objects.
            return Some(unsafe { heap_text(lhs) == heap_text(rhs) });
        }
        return if is_object_index(lt) {
            None
        } else {
            Some(false)
        };
    }
    let text = |t: i32| match t {
        kTVMFFIStr | kTVMFFISmallStr => Some(TextKind::Str),
        kTVMFFIBytes | kTVMFFISmallBytes => Some(TextKind::Bytes),
        _ => None,
    };
    Some(match (text(lt), text(rt)) {
        (Some(a), Some(b)) if a == b => {
            // SAFETY: the caller's values are valid.
            let (l, r) = unsafe { (AnyView::from_raw(lhs), AnyView::from_raw(rhs)) };
            str_bytes_of(l, a) == str_bytes_of(r, b)
        }
        _ => false,
    })
}

/// `AnyEqual`.
#[inline]
pub fn any_equal(lhs: AnyView<'_>, rhs: AnyView<'_>) -> Result<bool> {
    // SAFETY: views hold valid values.
    match unsafe { quick_equal(lhs.raw(), rhs.raw()) } {
        Some(equal) => Ok(equal),
        None => custom_equal(lhs, rhs),
    }
}

/// Equality of two objects of the same type through `__any_equal__`.
#[cold]
fn custom_equal(lhs: AnyView<'_>, rhs: AnyView<'_>) -> Result<bool> {
    match column_entry(COLUMNS.equal, lhs.raw().type_index) {
        Some(entry) => Ok(call_custom(entry, &[lhs, rhs], kTVMFFIBool)? != 0),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::any::Any;
    use crate::runtime::model::string::{TextKind, make_text};

    #[test]
    fn text_hashes_by_content_and_values_by_bits() {
        let small = make_text(b"abc", TextKind::Str);
        let long = make_text(b"abcdefghijklmnop", TextKind::Str);
        let long2 = make_text(b"abcdefghijklmnop", TextKind::Str);
        assert_eq!(
            any_hash(long.view()).unwrap(),
            any_hash(long2.view()).unwrap()
        );
        assert!(any_equal(long.view(), long2.view()).unwrap());
        assert!(!any_equal(small.view(), long.view()).unwrap());
        // Str and Bytes of the same text differ.
        let bytes = make_text(b"abc", TextKind::Bytes);
        assert!(!any_equal(small.view(), bytes.view()).unwrap());
        assert_ne!(
            any_hash(small.view()).unwrap(),
            any_hash(bytes.view()).unwrap()
        );
        assert!(any_equal(Any::from(7i64).view(), Any::from(7i64).view()).unwrap());
        assert!(!any_equal(Any::from(7i64).view(), Any::from(7.0f64).view()).unwrap());
        assert_eq!(hash_bytes(b""), 0);
    }

    #[test]
    fn floats_compare_by_bits_and_big_ints_by_value() {
        let nan = Any::from(f64::NAN);
        assert!(any_equal(nan.view(), nan.view()).unwrap());
        assert!(!any_equal(Any::from(0.0f64).view(), Any::from(-0.0f64).view()).unwrap());
        let words = [0i64, 1];
        let (a, b) = (
            crate::runtime::value::scalar::big_int_from_words(&words),
            crate::runtime::value::scalar::big_int_from_words(&words),
        );
        assert_eq!(a.type_index(), kTVMFFIBigInt);
        assert!(any_equal(a.view(), b.view()).unwrap());
        assert_eq!(any_hash(a.view()).unwrap(), any_hash(b.view()).unwrap());
    }
}
