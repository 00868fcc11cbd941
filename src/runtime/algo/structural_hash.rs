//! `ffi.StructuralHash`: a hash consistent with `ffi.StructuralEqual`
//! (structurally equal values hash alike), with the reference's walk.
//!
//! - POD values hash their bits (every NaN alike), a small string as its heap
//!   twin, strings, bytes and BigInts their content; sequences their length
//!   and elements; maps their size and their entries sorted by an
//!   order-independent key hash (entries whose keys have none, or tie, add
//!   only what is stable); shapes their dimensions; tensors their shape,
//!   dtype and (unless skipped) CPU bytes.
//! - Objects hash their type key and fields (or a `__s_hash__` hook). Free
//!   variables hash by their order of definition inside a definition
//!   region, else by identity; DAG nodes add their visit order, so a DAG and
//!   the tree it unfolds to differ. Each object is hashed once per call.

use crate::abi::*;
use crate::platform::address_map::AddrMap;
use crate::runtime::algo::traversal::{Local, PathGuard};
use crate::runtime::algo::traversal::{
    entering, hook_region, kind_of, outside_simple, region_of_flags, with_region,
};
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, str_bytes_of};
use crate::runtime::model::type_table::{self, Facts, Hook, type_key_hash};
use crate::runtime::reflect::field::get_field;
use crate::runtime::value::hash::{hash_bytes, hash_combine};
use crate::runtime::value::scalar::{big_int_words, shape_dims};
use crate::runtime::{value::map, value::seq, value::tensor};
use core::cell::RefMut;
use std::sync::Arc;

/// The hashing state.
struct State {
    def_region: i32,
    skip_tensor_content: bool,
    free_var_counter: u64,
    graph_node_counter: u64,
    /// Hashes of objects already visited, by address.
    memo: AddrMap<usize, u64>,
    /// Objects on the path from the root, by address (cycles and depth).
    on_path: PathGuard<usize>,
}

type Shared = Arc<Local<State>>;

fn lock(s: &Shared) -> RefMut<'_, State> {
    s.get()
}

/// The hash of a POD value, a string, bytes or a BigInt: what does not
/// depend on the traversal. None for other objects.
fn plain_hash(v: AnyView<'_>) -> Option<u64> {
    let raw = v.raw();
    let ti = raw.type_index;
    if !is_object_index(ti) {
        // SAFETY: POD values; a float is read as a float, the rest as bits.
        let bits = unsafe {
            if ti == kTVMFFIFloat && raw.value.v_float64.is_nan() {
                f64::NAN.to_bits()
            } else {
                raw.value.v_uint64
            }
        };
        // Small text hashes as its heap twin, as the two compare equal.
        // (The reference does this for strings only, so its small bytes and
        // heap bytes hash apart though they are equal.)
        return Some(match ti {
            kTVMFFISmallStr => hash_combine(
                kTVMFFIStr as u64,
                hash_bytes(str_bytes_of(v, TextKind::Str)?),
            ),
            kTVMFFISmallBytes => hash_combine(
                kTVMFFIBytes as u64,
                hash_bytes(str_bytes_of(v, TextKind::Bytes)?),
            ),
            _ => hash_combine(ti as u64, bits),
        });
    }
    match ti {
        kTVMFFIStr => Some(hash_combine(
            ti as u64,
            hash_bytes(str_bytes_of(v, TextKind::Str)?),
        )),
        kTVMFFIBytes => Some(hash_combine(
            ti as u64,
            hash_bytes(str_bytes_of(v, TextKind::Bytes)?),
        )),
        kTVMFFIBigInt => {
            let words = big_int_words(v)?;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
            Some(hash_combine(ti as u64, hash_bytes(&bytes)))
        }
        _ => None,
    }
}

fn hash(s: &Shared, v: AnyView<'_>) -> Result<u64> {
    let Some(at) = v.as_object_ptr().map(|p| p.as_ptr() as usize) else {
        return hash_level(s, v);
    };
    let tracked = lock(s).on_path.enter(at, "StructuralHash")?;
    let out = crate::runtime::model::depth::deep(|| hash_level(s, v));
    lock(s).on_path.leave(at, tracked);
    out
}

fn hash_level(s: &Shared, v: AnyView<'_>) -> Result<u64> {
    if let Some(h) = plain_hash(v) {
        return Ok(h);
    }
    let Some(obj) = v.borrow_object() else {
        return Ok(0);
    };
    let ti = obj.type_index();
    match ti {
        kTVMFFIArray | kTVMFFIList => {
            let items: Vec<Any> = seq::views(&obj, ti)?
                .map(|v| v.to_owned_any())
                .collect::<Result<_>>()?;
            let mut h = hash_combine(type_key_hash(ti), items.len() as u64);
            for item in &items {
                h = hash_combine(h, hash(s, item.view())?);
            }
            Ok(h)
        }
        kTVMFFIMap | kTVMFFIDict => hash_map(s, &obj),
        kTVMFFIShape => {
            let dims = shape_dims(&obj).unwrap_or(&[]);
            Ok(dims.iter().fold(
                hash_combine(type_key_hash(ti), dims.len() as u64),
                |h, &d| hash_combine(h, d as u64),
            ))
        }
        kTVMFFITensor => hash_tensor(s, &obj),
        _ => hash_object(s, &obj),
    }
}

/// A key's hash that does not depend on where the map is met: plain values
/// and objects already hashed in this call. None otherwise.
fn order_independent(s: &Shared, key: &Any) -> Option<u64> {
    plain_hash(key.view()).or_else(|| {
        let o = key.view().to_object()?;
        lock(s).memo.get(&(o.as_ptr() as usize)).copied()
    })
}

fn hash_map(s: &Shared, obj: &ObjectRef) -> Result<u64> {
    let mut h = hash_combine(type_key_hash(obj.type_index()), map::size(obj)?);
    let mut items: Vec<(u64, Any)> = map::items(obj)?
        .into_iter()
        .filter_map(|(k, v)| order_independent(s, &k).map(|kh| (kh, v)))
        .collect();
    items.sort_by_key(|(kh, _)| *kh);
    let mut i = 0;
    while i < items.len() {
        let mut k = i + 1;
        while k < items.len() && items[k].0 == items[i].0 {
            k += 1;
        }
        h = hash_combine(h, items[i].0);
        // Values of tied keys are left out: their order is not stable.
        if k == i + 1 {
            h = hash_combine(h, hash(s, items[i].1.view())?);
        }
        i = k;
    }
    Ok(h)
}

fn hash_tensor(s: &Shared, obj: &ObjectRef) -> Result<u64> {
    let shape = tensor::shape(obj)?;
    let dl = tensor::dl_tensor(obj)?;
    let mut h = hash_combine(type_key_hash(kTVMFFITensor), shape.len() as u64);
    for &d in shape {
        h = hash_combine(h, d as u64);
    }
    let dtype =
        u64::from(dl.dtype.code) | u64::from(dl.dtype.bits) << 8 | u64::from(dl.dtype.lanes) << 16;
    h = hash_combine(h, dtype);
    if !lock(s).skip_tensor_content {
        let bytes = tensor::compact_cpu_bytes(obj)
            .map_err(|e| e.rewrap(|m| format!("can only hash contiguous CPU tensors: {m}")))?;
        h = hash_combine(h, hash_bytes(bytes));
    }
    Ok(h)
}

fn hash_object(s: &Shared, obj: &ObjectRef) -> Result<u64> {
    let ti = obj.type_index();
    let facts = type_table::facts(ti)?;
    let kind = kind_of(ti, facts.kind)?;
    let at = obj.as_ptr() as usize;
    if let Some(&h) = lock(s).memo.get(&at) {
        return Ok(h);
    }
    let mut h;
    if kind != kTVMFFISEqHashKindFreeVar {
        h = hash_fields(s, &facts, obj)?;
    } else {
        // A free variable's own fields are hashed outside a simple region;
        // the walk runs even when its result is discarded, as later free
        // variables see the counter it advances.
        let current = lock(s).def_region;
        let fields = with_region(s, region, outside_simple, || hash_fields(s, &facts, obj))?;
        h = if current != kTVMFFIDefRegionKindNone {
            let mut st = lock(s);
            let n = st.free_var_counter;
            st.free_var_counter += 1;
            hash_combine(fields, n)
        } else {
            at as u64
        };
    }
    let mut st = lock(s);
    if kind == kTVMFFISEqHashKindDAGNode {
        h = hash_combine(h, st.graph_node_counter);
        st.graph_node_counter += 1;
    }
    st.memo.insert(at, h);
    Ok(h)
}

/// The definition region field of the hashing state.
fn region(st: &mut State) -> &mut i32 {
    &mut st.def_region
}

fn hash_fields(s: &Shared, facts: &Facts, obj: &ObjectRef) -> Result<u64> {
    let init = facts.key_hash;
    if let Some(hook) = facts
        .hook(Hook::SHash)
        .to_object()
        .and_then(Function::from_object)
    {
        let inner = s.clone();
        let callback = Function::from_closure(move |args| {
            args.expect_len("__s_hash__ callback", 3)?;
            let init = args.get(1).as_i64().unwrap_or(0) as u64;
            let kind = args.get(2).as_i64().unwrap_or(0) as i32;
            let h = with_region(&inner, region, hook_region(kind), || {
                hash(&inner, args.get(0))
            })?;
            Ok(Any::from(hash_combine(init, h) as i64))
        });
        let (o, i, c) = (
            Any::from(obj.clone()),
            Any::from(init as i64),
            Any::from(callback.into_object()),
        );
        let out = hook.call(&[o.view(), i.view(), c.view()])?;
        return out
            .view()
            .as_i64()
            .map(|h| h as u64)
            .ok_or_else(|| Error::type_error("`__s_hash__` must return an int"));
    }
    let mut h = init;
    for f in facts.fields.iter() {
        if f.flags & i64::from(kTVMFFIFieldFlagBitMaskSEqHashIgnore) != 0 {
            continue;
        }
        let v = get_field(obj, f)?;
        let fh = match region_of_flags(f.flags) {
            Some(kind) => with_region(s, region, entering(kind), || hash(s, v.view()))?,
            None => hash(s, v.view())?,
        };
        h = hash_combine(h, fh);
    }
    Ok(h)
}

/// `ffi.StructuralHash(value, map_free_vars, skip_tensor_content)`.
pub fn structural_hash(
    value: AnyView<'_>,
    map_free_vars: bool,
    skip_tensor_content: bool,
) -> Result<u64> {
    let s = Local::new(State {
        def_region: if map_free_vars {
            kTVMFFIDefRegionKindPattern
        } else {
            kTVMFFIDefRegionKindNone
        },
        skip_tensor_content,
        free_var_counter: 0,
        graph_node_counter: 0,
        memo: AddrMap::default(),
        on_path: PathGuard::default(),
    });
    hash(&s, value)
}

/// Registers `ffi.StructuralHash` (the result bit-cast to an int64).
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.StructuralHash",
        |value: AnyView<'_>, map_free_vars: bool, skip_tensor_content: bool| -> i64 {
            Ok(structural_hash(value, map_free_vars, skip_tensor_content)? as i64)
        }
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::string::make_text;

    #[test]
    fn equal_values_hash_alike() {
        let h = |v: &Any| structural_hash(v.view(), false, false).unwrap();
        let text = |t: &[u8], k| make_text(t, k);
        assert_eq!(h(&Any::from(f64::NAN)), h(&Any::from(-f64::NAN)));
        let heap = text(b"a long text that is not small", TextKind::Str);
        assert_eq!(h(&heap), h(&heap.clone()));
        let map = |pairs: Vec<(Any, Any)>| Any::from(map::new_map(kTVMFFIMap, pairs).unwrap());
        let (a, b) = (Any::from(1i64), text(b"k", TextKind::Str));
        // Insertion order does not matter.
        let m1 = map(vec![(b.clone(), a.clone()), (a.clone(), b.clone())]);
        let m2 = map(vec![(a.clone(), b.clone()), (b.clone(), a.clone())]);
        assert_eq!(h(&m1), h(&m2));
        assert_ne!(
            h(&Any::from(seq::new_array(vec![a.clone()]))),
            h(&Any::from(seq::new_list(vec![a])))
        );
    }

    #[test]
    fn cycles_are_errors_and_deep_nesting_works() {
        let list = seq::new_list(vec![Any::from(1i64)]);
        seq::ListMut::new(&list)
            .unwrap()
            .insert(1, vec![Any::from(list.clone())])
            .unwrap();
        let err = structural_hash(Any::from(list.clone()).view(), false, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ValueError: StructuralHash: the value contains a cycle"
        );
        let v = Any::from(list.clone());
        let err = crate::runtime::algo::structural_equal::structural_equal(
            v.view(),
            v.view(),
            false,
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "ValueError: StructuralEqual: the values contain a cycle"
        );
        // Break the cycle so the list can be released.
        seq::ListMut::new(&list).unwrap().clear();
        let mut deep = Any::from(0i64);
        for _ in 0..100_000 {
            deep = Any::from(seq::new_array(vec![deep]));
        }
        assert!(structural_hash(deep.view(), false, false).is_ok());
        assert!(
            crate::runtime::algo::structural_equal::structural_equal(
                deep.view(),
                deep.view(),
                false,
                false
            )
            .unwrap()
        );
    }
}
