//! `ffi.StructuralKey`: a value with its structural hash, usable as a map
//! key whose `__any_hash__` and `__any_equal__` are structural. The type's
//! layout is a reflected built-in; its behaviour is described here, above
//! structural equality and hashing.

use crate::abi::*;
use crate::runtime::algo::structural_equal::structural_equal;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{ObjectT, Owned, Schema};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::type_table::{Table, type_key_of};
use crate::runtime::reflect::field::Storage;
use crate::runtime::reflect::reflected::{
    AnyField, StructuralKeyObj, StructuralKeyT, kStructuralKey,
};
use crate::runtime::reflect::type_def::{TypeDef, create};
use core::ffi::c_void;
use core::mem::offset_of;

/// Describes `ffi.StructuralKey`: its fields, structural `__any_hash__` and
/// `__any_equal__`, and its constructor.
pub fn register_type(t: &mut Table) {
    TypeDef::dynamic(t, "ffi.StructuralKey", kTVMFFIObject, 1, kStructuralKey)
        .metadata(Some(create::<StructuralKeyObj, kStructuralKey>), 48, 0)
        .field(
            "key",
            "",
            0,
            Storage::Any,
            offset_of!(StructuralKeyObj, key),
            -1,
            Schema::ANY,
        )
        .field(
            "hash_i64",
            "",
            0,
            Storage::I64,
            offset_of!(StructuralKeyObj, hash_i64),
            kTVMFFIInt,
            Schema::INT,
        )
        .attr(
            "__any_hash__",
            Any::opaque_ptr(structural_key_any_hash as *mut c_void),
        )
        .attr(
            "__any_equal__",
            Any::opaque_ptr(structural_key_any_equal as *mut c_void),
        )
        .creatable::<StructuralKeyObj>()
        .explicit_init(
            typed_fn!(
                "ffi.StructuralKey.__ffi_init__",
                |key: AnyView<'_>| -> Owned<ObjectT> {
                    Ok(Owned::new(structural_key(key.to_owned_any()?)?))
                }
            ),
            "Constructor that takes any key and computes its structural hash",
        )
        .final_(true);
}

/// `ffi.StructuralKey(key)`: `key` with its structural hash, usable as a
/// map key (its `__any_hash__` / `__any_equal__` are structural).
pub fn structural_key(key: Any) -> Result<ObjectRef> {
    let hash_i64 =
        crate::runtime::algo::structural_hash::structural_hash(key.view(), false, false)? as i64;
    Ok(crate::runtime::model::object::new_object(
        kStructuralKey,
        StructuralKeyObj {
            key: AnyField(key),
            hash_i64,
        },
    ))
}

/// The fields of a StructuralKey value, or a TypeError.
fn key_fields(v: &ObjectRef) -> Result<&StructuralKeyObj> {
    if v.type_index() != kStructuralKey {
        return Err(Error::type_error(format!(
            "expected an ffi.StructuralKey, got {}",
            type_key_of(v.type_index())
        )));
    }
    // SAFETY: objects of this type index have the StructuralKeyObj layout
    // (ours, or the reference's C++ class it mirrors).
    Ok(unsafe { v.payload::<StructuralKeyObj>() })
}

/// `ffi.StructuralKeyEqual`: identical, or equal hashes and structurally
/// equal keys.
pub fn structural_key_equal(l: AnyView<'_>, r: AnyView<'_>) -> Result<bool> {
    let (Some(lo), Some(ro)) = (l.to_object(), r.to_object()) else {
        return Err(Error::type_error(
            "ffi.StructuralKeyEqual expects two ffi.StructuralKey",
        ));
    };
    if lo == ro {
        return Ok(true);
    }
    let (a, b) = (key_fields(&lo)?, key_fields(&ro)?);
    Ok(a.hash_i64 == b.hash_i64 && structural_equal(a.key.0.view(), b.key.0.view(), false, false)?)
}

/// `__any_hash__` of StructuralKey (native: `TVMFFIAny(const Any&)`): its
/// stored hash, so map lookups are structural, also for C++ readers.
///
/// # Safety
/// `value` points to a valid value.
pub unsafe extern "C" fn structural_key_any_hash(value: *const TVMFFIAny) -> TVMFFIAny {
    crate::runtime::model::boundary::catch_or(TVMFFIAny::NONE, || {
        // SAFETY: the caller passes a valid value.
        let v = unsafe { AnyView::from_raw(&*value) };
        let result = v
            .to_object()
            .ok_or_else(|| Error::type_error("expected an ffi.StructuralKey"))
            .and_then(|o| Ok(Any::from(key_fields(&o)?.hash_i64)));
        result
            .unwrap_or_else(|e| Any::from(e.into_object()))
            .into_raw()
    })
}

/// `__any_equal__` of StructuralKey (native: `TVMFFIAny(const Any&, const
/// Any&)`).
///
/// # Safety
/// `lhs` and `rhs` point to valid values.
pub unsafe extern "C" fn structural_key_any_equal(
    lhs: *const TVMFFIAny,
    rhs: *const TVMFFIAny,
) -> TVMFFIAny {
    crate::runtime::model::boundary::catch_or(TVMFFIAny::NONE, || {
        // SAFETY: the caller passes valid values.
        let (l, r) = unsafe { (AnyView::from_raw(&*lhs), AnyView::from_raw(&*rhs)) };
        let result = structural_key_equal(l, r).map(Any::from);
        result
            .unwrap_or_else(|e| Any::from(e.into_object()))
            .into_raw()
    })
}

/// Registers `ffi.StructuralKey` and `ffi.StructuralKeyEqual`.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!("ffi.StructuralKey", |key: AnyView<'_>| -> Owned<
        StructuralKeyT,
    > {
        Ok(Owned::new(structural_key(key.to_owned_any()?)?))
    }));
    g.add(typed_fn! {
        "ffi.StructuralKeyEqual",
        |lhs: AnyView<'_>, rhs: AnyView<'_>| -> bool {
            structural_key_equal(lhs, rhs)
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::string::{TextKind, make_text};
    use crate::runtime::value::{map, seq};

    fn s(t: &str) -> Any {
        make_text(t.as_bytes(), TextKind::Str)
    }

    #[test]
    fn structural_keys_find_equal_structures_in_maps() {
        let key = || {
            let arr = seq::new_array(vec![Any::from(1i64), s("a long string on the heap")]);
            Any::from(structural_key(Any::from(arr)).unwrap())
        };
        let (k1, k2) = (key(), key());
        assert!(structural_key_equal(k1.view(), k2.view()).unwrap());
        let m = map::new_map(kTVMFFIDict, [(k1, Any::from(7i64))]).unwrap();
        let found = map::get(&m, k2.view())
            .unwrap()
            .expect("an equal structure is found");
        assert_eq!(found.view().as_i64(), Some(7));
    }
}
