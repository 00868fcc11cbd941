//! `ffi.RecursiveHash`: the hash frontends use for `hash()` of containers
//! and reflected objects, consistent with `ffi.RecursiveEq` (the
//! `__ffi_hash__` hook and per-field flags, as the reference's).

use super::recursive::{elements, field_values, hook, text_of};
use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::depth::{MAX_DEPTH, deep, too_deep};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::TextKind;
use crate::runtime::model::type_table::{self, type_key_of};
use crate::runtime::value::hash::{hash_bytes, hash_combine};
use crate::runtime::value::map;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct HashState {
    on_stack: HashSet<usize>,
    memo: HashMap<usize, u64>,
}

/// `ffi.RecursiveHash`: consistent with `RecursiveEq`.
pub fn recursive_hash(value: AnyView<'_>) -> Result<i64> {
    let state = Arc::new(Mutex::new(HashState::default()));
    Ok(hash_value(&state, value, 0)? as i64)
}

fn lock(state: &Mutex<HashState>) -> std::sync::MutexGuard<'_, HashState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn hash_pod(v: &TVMFFIAny) -> u64 {
    let ti = v.type_index;
    // SAFETY: each arm reads the payload field of its type.
    unsafe {
        match ti {
            kTVMFFIBool => hash_combine(ti as u64, u64::from(v.value.v_int64 != 0)),
            kTVMFFIFloat => {
                let x = v.value.v_float64;
                let bits = if x.is_nan() {
                    f64::NAN.to_bits()
                } else if x == 0.0 {
                    0
                } else {
                    x.to_bits()
                };
                hash_combine(ti as u64, bits)
            }
            kTVMFFIDataType => {
                let d = v.value.v_dtype;
                let h = hash_combine(ti as u64, u64::from(d.code));
                hash_combine(hash_combine(h, u64::from(d.bits)), u64::from(d.lanes))
            }
            kTVMFFIDevice => {
                let d = v.value.v_device;
                let h = hash_combine(ti as u64, d.device_type as u64);
                hash_combine(h, d.device_id as u64)
            }
            _ => hash_combine(ti as u64, v.value.v_uint64),
        }
    }
}

fn hash_value(state: &Arc<Mutex<HashState>>, value: AnyView<'_>, depth: usize) -> Result<u64> {
    deep(|| hash_level(state, value, depth))
}

fn hash_level(state: &Arc<Mutex<HashState>>, value: AnyView<'_>, depth: usize) -> Result<u64> {
    let ti = value.type_index();
    if ti == kTVMFFINone {
        return Ok(hash_combine(0, 0));
    }
    if let Some(t) = text_of(value, TextKind::Str) {
        return Ok(hash_combine(kTVMFFIStr as u64, hash_bytes(t)));
    }
    if let Some(t) = text_of(value, TextKind::Bytes) {
        return Ok(hash_combine(kTVMFFIBytes as u64, hash_bytes(t)));
    }
    if !is_object_index(ti) {
        return Ok(hash_pod(value.raw()));
    }
    let Some(obj) = value.to_object() else {
        return Ok(hash_combine(0, 0));
    };
    let key = obj.as_ptr() as usize;
    {
        let s = lock(state);
        if let Some(&h) = s.memo.get(&key) {
            return Ok(h);
        }
        if s.on_stack.contains(&key) {
            return Ok(type_table::type_key_hash(ti));
        }
    }
    if ti == kTVMFFIShape {
        let dims = crate::runtime::value::scalar::shape_dims(&obj).unwrap_or(&[]);
        let mut h = hash_combine(type_table::type_key_hash(ti), dims.len() as u64);
        for &d in dims {
            h = hash_combine(h, d as u64);
        }
        lock(state).memo.insert(key, h);
        return Ok(h);
    }
    if depth >= MAX_DEPTH {
        return Err(too_deep("RecursiveHash"));
    }
    if let Some(f) = hook("__ffi_hash__", ti) {
        lock(state).on_stack.insert(key);
        let inner = state.clone();
        let callback = Function::from_closure(move |args| {
            args.expect_len("fn_hash", 1)?;
            Ok(Any::from(hash_value(&inner, args.get(0), 0)? as i64))
        });
        let (o, cb) = (Any::from(obj.clone()), Any::from(callback.into_object()));
        let out = f.call(&[o.view(), cb.view()]);
        lock(state).on_stack.remove(&key);
        let h = out?
            .view()
            .as_i64()
            .ok_or_else(|| Error::type_error("__ffi_hash__ must return an int"))?
            as u64;
        lock(state).memo.insert(key, h);
        return Ok(h);
    }
    if ti >= kTVMFFIStaticObjectEnd
        && (hook("__ffi_eq__", ti).is_some() || hook("__ffi_compare__", ti).is_some())
    {
        return Err(Error::value(format!(
            "RecursiveHash: type '{}' defines __ffi_eq__ or __ffi_compare__ but not __ffi_hash__. \
             Add a __ffi_hash__ hook to maintain the invariant RecursiveEq(a,b) => \
             RecursiveHash(a)==RecursiveHash(b).",
            type_key_of(ti)
        )));
    }
    lock(state).on_stack.insert(key);
    let result = hash_children(state, &obj, depth);
    let mut s = lock(state);
    s.on_stack.remove(&key);
    let h = result?;
    s.memo.insert(key, h);
    Ok(h)
}

fn hash_children(state: &Arc<Mutex<HashState>>, obj: &ObjectRef, depth: usize) -> Result<u64> {
    let ti = obj.type_index();
    match ti {
        kTVMFFIArray | kTVMFFIList => {
            let items = elements(obj)?;
            let mut h = hash_combine(type_table::type_key_hash(ti), items.len() as u64);
            for (i, item) in items.iter().enumerate() {
                let c = hash_value(state, item.view(), depth + 1)?;
                h = hash_combine(h, hash_combine(c, i as u64));
            }
            Ok(h)
        }
        kTVMFFIMap | kTVMFFIDict => {
            let items = map::items(obj)?;
            let mut h = hash_combine(type_table::type_key_hash(ti), items.len() as u64);
            let mut entries = items
                .iter()
                .map(|(k, v)| {
                    Ok(hash_combine(
                        hash_value(state, k.view(), depth + 1)?,
                        hash_value(state, v.view(), depth + 1)?,
                    ))
                })
                .collect::<Result<Vec<u64>>>()?;
            entries.sort_unstable();
            for e in entries {
                h = hash_combine(h, e);
            }
            Ok(h)
        }
        _ => {
            let mut h = type_table::type_key_hash(ti);
            let skip = kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff;
            for (_, v) in field_values(obj, skip)? {
                h = hash_combine(h, hash_value(state, v.view(), depth + 1)?);
            }
            Ok(h)
        }
    }
}

/// Registers `ffi.RecursiveHash`.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.RecursiveHash",
        |value: AnyView<'_>| -> i64 { recursive_hash(value.to_owned_any()?.view()) }
    ));
}
