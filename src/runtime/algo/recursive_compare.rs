//! `ffi.RecursiveEq/Lt/Le/Gt/Ge`: the comparisons frontends use for `==`
//! and ordering of containers and reflected objects, with the reference's
//! semantics (cycles, shared sub-objects, NaN and signed zero, the
//! `__ffi_eq__`/`__ffi_compare__` hooks and per-field flags).

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
use crate::runtime::model::type_table::type_key_of;
use crate::runtime::value::map;
use crate::runtime::value::scalar::{big_int_compare, big_int_words};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

struct Compare {
    eq_only: bool,
    on_stack: Mutex<HashSet<(usize, usize)>>,
}

/// Three-way recursive comparison (-1, 0, 1); with `eq_only`, any
/// difference is 1 and unordered values are not errors.
pub fn recursive_compare(lhs: AnyView<'_>, rhs: AnyView<'_>, eq_only: bool) -> Result<i32> {
    let ctx = Arc::new(Compare {
        eq_only,
        on_stack: Mutex::new(HashSet::new()),
    });
    compare(&ctx, lhs, rhs, 0, false)
}

fn unordered(ctx: &Compare, message: impl Into<String>) -> Result<i32> {
    if ctx.eq_only {
        Ok(1)
    } else {
        Err(Error::type_error(message))
    }
}

fn compare_pod(ctx: &Compare, l: &TVMFFIAny, r: &TVMFFIAny) -> Result<i32> {
    let ord = |o: core::cmp::Ordering| o as i32;
    // SAFETY: both values are of type `l.type_index`, whose payload field is read.
    unsafe {
        Ok(match l.type_index {
            kTVMFFIBool => i32::from(l.value.v_int64 != 0) - i32::from(r.value.v_int64 != 0),
            kTVMFFIInt => ord(l.value.v_int64.cmp(&r.value.v_int64)),
            kTVMFFIFloat => {
                let (a, b) = (l.value.v_float64, r.value.v_float64);
                if a.is_nan() || b.is_nan() {
                    if ctx.eq_only {
                        return Ok(i32::from(!(a.is_nan() && b.is_nan())));
                    }
                    return Err(Error::type_error("Cannot order NaN values"));
                }
                ord(a.partial_cmp(&b).expect("not NaN"))
            }
            kTVMFFIDataType => {
                let (a, b) = (l.value.v_dtype, r.value.v_dtype);
                ord((a.code, a.bits, a.lanes).cmp(&(b.code, b.bits, b.lanes)))
            }
            kTVMFFIDevice => {
                let (a, b) = (l.value.v_device, r.value.v_device);
                ord((a.device_type, a.device_id).cmp(&(b.device_type, b.device_id)))
            }
            _ => {
                if l.small_str_len == r.small_str_len && l.value.v_int64 == r.value.v_int64 {
                    0
                } else {
                    return unordered(
                        ctx,
                        format!("Cannot order values of type {}", type_key_of(l.type_index)),
                    );
                }
            }
        })
    }
}

fn compare(
    ctx: &Arc<Compare>,
    lhs: AnyView<'_>,
    rhs: AnyView<'_>,
    depth: usize,
    in_map: bool,
) -> Result<i32> {
    deep(|| compare_level(ctx, lhs, rhs, depth, in_map))
}

fn compare_level(
    ctx: &Arc<Compare>,
    lhs: AnyView<'_>,
    rhs: AnyView<'_>,
    depth: usize,
    in_map: bool,
) -> Result<i32> {
    let (lti, rti) = (lhs.type_index(), rhs.type_index());
    match (lti == kTVMFFINone, rti == kTVMFFINone) {
        (true, true) => return Ok(0),
        (true, false) => return Ok(-1),
        (false, true) => return Ok(1),
        _ => {}
    }
    for kind in [TextKind::Str, TextKind::Bytes] {
        if let (Some(a), Some(b)) = (text_of(lhs, kind), text_of(rhs, kind)) {
            return Ok(a.cmp(b) as i32);
        }
    }
    if lti != rti {
        if ctx.eq_only {
            return Ok(1);
        }
        if let (Some(a), Some(b)) = (big_int_words(lhs), big_int_words(rhs)) {
            return Ok(big_int_compare(a, b));
        }
        return Err(Error::type_error(format!(
            "Cannot compare values of different types: {} vs {}",
            type_key_of(lti),
            type_key_of(rti)
        )));
    }
    if !is_object_index(lti) {
        return compare_pod(ctx, lhs.raw(), rhs.raw());
    }
    if lti == kTVMFFIBigInt {
        let (a, b) = (
            big_int_words(lhs).unwrap_or(&[]),
            big_int_words(rhs).unwrap_or(&[]),
        );
        return Ok(if ctx.eq_only {
            i32::from(a != b)
        } else {
            big_int_compare(a, b)
        });
    }
    let (Some(lo), Some(ro)) = (lhs.to_object(), rhs.to_object()) else {
        return Ok(match (lhs.as_object_ptr(), rhs.as_object_ptr()) {
            (None, None) => 0,
            (None, _) => -1,
            _ => 1,
        });
    };
    if lo == ro {
        return Ok(0);
    }
    if lti == kTVMFFIShape {
        let (a, b) = (
            crate::runtime::value::scalar::shape_dims(&lo).unwrap_or(&[]),
            crate::runtime::value::scalar::shape_dims(&ro).unwrap_or(&[]),
        );
        return Ok(a.cmp(b) as i32);
    }
    let pair = (lo.as_ptr() as usize, ro.as_ptr() as usize);
    if ctx
        .on_stack
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&pair)
    {
        if ctx.eq_only {
            return Ok(0);
        }
        return Err(Error::value(
            "RecursiveCompare: cyclic reference detected in ordering",
        ));
    }
    if depth >= MAX_DEPTH {
        return Err(too_deep("RecursiveCompare"));
    }
    if lti >= kTVMFFIStaticObjectEnd
        && let Some(result) = custom_compare(ctx, &lo, &ro, pair)?
    {
        return Ok(result);
    }
    ctx.on_stack
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(pair);
    let result = compare_children(ctx, &lo, &ro, depth, in_map);
    ctx.on_stack
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&pair);
    result
}

fn compare_children(
    ctx: &Arc<Compare>,
    lo: &ObjectRef,
    ro: &ObjectRef,
    depth: usize,
    in_map: bool,
) -> Result<i32> {
    let ti = lo.type_index();
    // A difference inside a Map/Dict cannot be ordered.
    let propagate = |r: i32, in_map: bool| -> Result<i32> {
        if r != 0 && in_map && !ctx.eq_only {
            return Err(Error::type_error("Cannot order Map/Dict values"));
        }
        Ok(r)
    };
    match ti {
        kTVMFFIArray | kTVMFFIList => {
            let (a, b) = (elements(lo)?, elements(ro)?);
            for (x, y) in a.iter().zip(&b) {
                let r = compare(ctx, x.view(), y.view(), depth + 1, in_map)?;
                if r != 0 {
                    return propagate(r, in_map);
                }
            }
            propagate(a.len().cmp(&b.len()) as i32, in_map)
        }
        kTVMFFIMap | kTVMFFIDict => {
            if map::size(lo)? != map::size(ro)? {
                return unordered(ctx, "Cannot order Map/Dict values");
            }
            for (k, v) in map::items(lo)? {
                let Some(other) = map::get(ro, k.view())? else {
                    return unordered(ctx, "Cannot order Map/Dict values");
                };
                let r = compare(ctx, v.view(), other.view(), depth + 1, true)?;
                if r != 0 {
                    return propagate(r, true);
                }
            }
            Ok(0)
        }
        _ => {
            if ti != ro.type_index() {
                return unordered(
                    ctx,
                    format!(
                        "Cannot compare objects of different types: {} vs {}",
                        type_key_of(ti),
                        type_key_of(ro.type_index())
                    ),
                );
            }
            let (a, b) = (
                field_values(lo, kTVMFFIFieldFlagBitMaskCompareOff)?,
                field_values(ro, kTVMFFIFieldFlagBitMaskCompareOff)?,
            );
            for ((_, x), (_, y)) in a.iter().zip(&b) {
                let r = compare(ctx, x.view(), y.view(), depth + 1, in_map)?;
                if r != 0 {
                    return propagate(r, in_map);
                }
            }
            Ok(0)
        }
    }
}

/// `__ffi_eq__` / `__ffi_compare__` of a reflected type, if it has one.
fn custom_compare(
    ctx: &Arc<Compare>,
    lo: &ObjectRef,
    ro: &ObjectRef,
    pair: (usize, usize),
) -> Result<Option<i32>> {
    if lo.type_index() != ro.type_index() {
        return unordered(
            ctx,
            format!(
                "Cannot compare objects of different types: {} vs {}",
                type_key_of(lo.type_index()),
                type_key_of(ro.type_index())
            ),
        )
        .map(Some);
    }
    let ti = lo.type_index();
    let eq = if ctx.eq_only {
        hook("__ffi_eq__", ti)
    } else {
        None
    };
    let (f, is_eq) = match (eq, hook("__ffi_compare__", ti)) {
        (Some(f), _) => (f, true),
        (None, Some(f)) => (f, false),
        (None, None) => return Ok(None),
    };
    let inner = ctx.clone();
    let callback = Function::from_closure(move |args| {
        args.expect_len("fn_compare", 2)?;
        let r = compare(&inner, args.get(0), args.get(1), 0, false)?;
        Ok(if is_eq {
            Any::from(r == 0)
        } else {
            Any::from(i64::from(r))
        })
    });
    ctx.on_stack
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(pair);
    let (l, r, cb) = (
        Any::from(lo.clone()),
        Any::from(ro.clone()),
        Any::from(callback.into_object()),
    );
    let out = f.call(&[l.view(), r.view(), cb.view()]);
    ctx.on_stack
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&pair);
    let out = out?;
    let v = out
        .view()
        .as_i64()
        .ok_or_else(|| Error::type_error("a comparison hook must return a bool or an int"))?;
    Ok(Some(if is_eq {
        i32::from(v == 0)
    } else {
        v.signum() as i32
    }))
}

/// `recursive_compare` of the arguments as owned values (the reference
/// takes `Any`: a raw C string becomes a String, which its messages show).
fn compare_owned(l: AnyView<'_>, r: AnyView<'_>, eq_only: bool) -> Result<i32> {
    let (l, r) = (l.to_owned_any()?, r.to_owned_any()?);
    recursive_compare(l.view(), r.view(), eq_only)
}

/// Registers `ffi.Recursive{Eq,Lt,Le,Gt,Ge}`.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn! {
        "ffi.RecursiveEq",
        |l: AnyView<'_>, r: AnyView<'_>| -> bool {
            Ok(compare_owned(l, r, true)? == 0)
        }
    });
    g.add(typed_fn! {
        "ffi.RecursiveLt",
        |l: AnyView<'_>, r: AnyView<'_>| -> bool {
            Ok(compare_owned(l, r, false)? < 0)
        }
    });
    g.add(typed_fn! {
        "ffi.RecursiveLe",
        |l: AnyView<'_>, r: AnyView<'_>| -> bool {
            Ok(compare_owned(l, r, false)? <= 0)
        }
    });
    g.add(typed_fn! {
        "ffi.RecursiveGt",
        |l: AnyView<'_>, r: AnyView<'_>| -> bool {
            Ok(compare_owned(l, r, false)? > 0)
        }
    });
    g.add(typed_fn! {
        "ffi.RecursiveGe",
        |l: AnyView<'_>, r: AnyView<'_>| -> bool {
            Ok(compare_owned(l, r, false)? >= 0)
        }
    });
}
