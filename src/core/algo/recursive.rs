//! The recursive reflection algorithms frontends use for `==`, ordering,
//! `hash()` and `repr()` of containers and reflected objects:
//! `ffi.RecursiveEq/Lt/Le/Gt/Ge`, `ffi.RecursiveHash` and `ffi.ReprPrint`,
//! with the reference's semantics (cycles, shared sub-objects, NaN and
//! signed zero, the `__ffi_eq__`/`__ffi_compare__`/`__ffi_hash__`/
//! `__ffi_repr__` hooks and per-field flags) and its output format.
//!
//! The walks recurse, each level through [`crate::core::model::stack::deep`] (so no
//! thread's stack overflows); nesting deeper than [`MAX_DEPTH`], the
//! reference's bound, is refused with a `ValueError`.

use crate::abi::*;
use crate::core::call::function::Function;
use crate::core::call::registry::Globals;
use crate::core::call::signature::StrAny;
use crate::core::call::signature::typed_fn;
use crate::core::model::any::{Any, AnyView, is_object_index};
use crate::core::model::error::{Error, Result};
use crate::core::model::object::ObjectRef;
use crate::core::model::stack::{MAX_DEPTH, deep, too_deep};
use crate::core::model::string::{TextKind, str_bytes_of};
use crate::core::model::type_table::{self, fields_with_ancestors, type_key_of};
use crate::core::reflect::field::get_field;
use crate::core::reflect::reflected::kEnum;
use crate::core::value::hash::{hash_bytes, hash_combine};
use crate::core::value::scalar::{big_int_compare, big_int_to_string, big_int_words};
use crate::core::{value::map, value::seq};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The elements of an Array or List, owned.
fn elements(obj: &ObjectRef) -> Result<Vec<Any>> {
    seq::elements(obj, obj.type_index())?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
        .collect()
}

/// The fields of `obj`'s type without the `skip` flags, with their values.
fn field_values(obj: &ObjectRef, skip: i32) -> Result<Vec<(TVMFFIFieldInfo, Any)>> {
    fields_with_ancestors(obj.type_index())?
        .into_iter()
        .filter(|f| f.flags & i64::from(skip) == 0)
        .map(|f| {
            let v = get_field(obj, &f)?;
            Ok((f, v))
        })
        .collect()
}

/// The Function in attribute `name` of `type_index`, if any.
fn hook(name: &str, type_index: i32) -> Option<Function> {
    type_table::attr_value(name, type_index)
        .and_then(|v| v.view().to_object())
        .and_then(Function::from_object)
}

/// The text of a string value (small or heap), if it is one.
fn text_of(v: AnyView<'_>, kind: TextKind) -> Option<&[u8]> {
    let ok = match kind {
        TextKind::Str => matches!(v.type_index(), kTVMFFIStr | kTVMFFISmallStr),
        TextKind::Bytes => matches!(v.type_index(), kTVMFFIBytes | kTVMFFISmallBytes),
    };
    if ok { str_bytes_of(v, kind) } else { None }
}

// ---------------------------------------------------------------- compare

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
            crate::core::value::scalar::shape_dims(&lo).unwrap_or(&[]),
            crate::core::value::scalar::shape_dims(&ro).unwrap_or(&[]),
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
    if lti >= kTVMFFIStaticObjectEnd {
        if let Some(result) = custom_compare(ctx, &lo, &ro, pair)? {
            return Ok(result);
        }
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

// ---------------------------------------------------------------- hash

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
        let dims = crate::core::value::scalar::shape_dims(&obj).unwrap_or(&[]);
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

// ---------------------------------------------------------------- repr

/// The most text `ReprPrint` keeps for objects met again while printing
/// into a hook's own buffer (in the main buffer only positions are kept).
const REPR_CACHE_BYTES: usize = 64 << 20;

/// The text of an object printed before, to print again when met again.
enum Printed {
    /// Where it lies in the main output buffer.
    At(core::ops::Range<usize>),
    /// Its text, printed into a hook's buffer.
    Text(String),
}

#[derive(Default)]
struct ReprState {
    in_progress: HashSet<usize>,
    done: HashMap<usize, Printed>,
    /// The bytes of the texts in `done`.
    done_bytes: usize,
    show_addr: bool,
    /// Whether the value printed was composed from its parts (a container
    /// or reflected object) rather than printed directly.
    composed: bool,
}

/// `ffi.ReprPrint`. Addresses are shown when `TVM_FFI_REPR_WITH_ADDR=1`.
/// Also says whether the text was composed from the value's parts (the
/// reference returns those as heap strings). Every part is written once
/// into one buffer, so the cost is linear in the text: a 300,000-deep chain
/// copies no child's text into its parent's.
pub fn repr_print(value: AnyView<'_>) -> Result<(String, bool)> {
    let state = ReprState {
        show_addr: std::env::var("TVM_FFI_REPR_WITH_ADDR").is_ok_and(|v| v == "1"),
        ..ReprState::default()
    };
    let state = Arc::new(Mutex::new(state));
    let mut text = String::new();
    repr(&state, value, 0, &mut Out::main(&mut text))?;
    let composed = rlock(&state).composed;
    Ok((text, composed))
}

/// Where a repr is written: the main buffer (whose positions `done`
/// records) or a hook's own.
struct Out<'a> {
    text: &'a mut String,
    main: bool,
}

impl<'a> Out<'a> {
    fn main(text: &'a mut String) -> Self {
        Out { text, main: true }
    }
    fn hook(text: &'a mut String) -> Self {
        Out { text, main: false }
    }
}

fn rlock(state: &Mutex<ReprState>) -> std::sync::MutexGuard<'_, ReprState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name of a DLPack device type, as the reference prints it.
fn device_name(device_type: i32) -> &'static str {
    match device_type {
        1 => "cpu",
        2 => "cuda",
        3 => "cuda_host",
        4 => "opencl",
        7 => "vulkan",
        8 => "metal",
        9 => "vpi",
        10 => "rocm",
        11 => "rocm_host",
        12 => "ext_dev",
        13 => "cuda_managed",
        14 => "oneapi",
        15 => "webgpu",
        16 => "hexagon",
        17 => "maia",
        18 => "trn",
        _ => "unknown",
    }
}

fn device_text(d: DLDevice) -> String {
    format!("{}:{}", device_name(d.device_type), d.device_id)
}

/// A double as C++'s default stream formatting prints it (`%g`).
fn float_text(x: f64) -> String {
    crate::core::model::string::format_f64(c"%g", x)
}

/// A Python-style bytes literal, `b"..."`.
fn bytes_text(data: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &c in data {
        if (32..127).contains(&c) && c != b'"' && c != b'\\' {
            out.push(c as char);
        } else {
            out.push_str(&format!("\\x{c:02x}"));
        }
    }
    out.push('"');
    out
}

/// A Python-style quoted string (`EscapedStringPy` of the reference).
pub fn escaped_string(data: &[u8]) -> String {
    let mut out = String::from("\"");
    let n = data.len();
    let mut i = 0;
    while i < n {
        let c = data[i];
        let d = data.get(i + 1).copied().unwrap_or(0);
        if c == 0x1b && d == b'[' {
            let mut j = i + 2;
            while j < n && (data[j].is_ascii_digit() || data[j] == b';') {
                j += 1;
            }
            if j < n && (data[j] == b'm' || data[j] == b'K') {
                out.push_str("\\x1b[");
                out.push_str(&String::from_utf8_lossy(&data[i + 2..=j]));
                i = j + 1;
                continue;
            }
        }
        match c {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            c if c < 0x80 => {
                if c < 0x20 || c == 0x7f {
                    out.push_str(&format!("\\x{c:02x}"));
                } else {
                    out.push(c as char);
                }
            }
            _ => {
                let cont = |k: usize| data.get(i + k).is_some_and(|b| b & 0xC0 == 0x80);
                let (len, cp) = if c & 0xE0 == 0xC0 && i + 1 < n && cont(1) {
                    (2, (u32::from(c & 0x1F) << 6) | u32::from(d & 0x3F))
                } else if c & 0xF0 == 0xE0 && i + 2 < n && cont(1) && cont(2) {
                    let e = data[i + 2];
                    (
                        3,
                        (u32::from(c & 0x0F) << 12)
                            | (u32::from(d & 0x3F) << 6)
                            | u32::from(e & 0x3F),
                    )
                } else if c & 0xF8 == 0xF0 && i + 3 < n && cont(1) && cont(2) && cont(3) {
                    let (e, f) = (data[i + 2], data[i + 3]);
                    (
                        4,
                        (u32::from(c & 0x07) << 18)
                            | (u32::from(d & 0x3F) << 12)
                            | (u32::from(e & 0x3F) << 6)
                            | u32::from(f & 0x3F),
                    )
                } else {
                    (1, 0)
                };
                match len {
                    1 => out.push_str(&format!("\\x{c:02x}")),
                    4 => out.push_str(&format!("\\U{cp:08x}")),
                    _ => out.push_str(&format!("\\u{cp:04x}")),
                }
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out.push('"');
    out
}

fn addr(obj: &ObjectRef) -> String {
    format!("0x{:x}", obj.as_ptr() as usize)
}

fn is_container(ti: i32) -> bool {
    matches!(ti, kTVMFFIArray | kTVMFFIList | kTVMFFIMap | kTVMFFIDict)
}

fn repr(
    state: &Arc<Mutex<ReprState>>,
    value: AnyView<'_>,
    depth: usize,
    out: &mut Out<'_>,
) -> Result<()> {
    deep(|| repr_level(state, value, depth, out))
}

/// Writes the repr of a value that is not an object reflection walks
/// (scalars, strings, tensors, shapes, ...); answers false for the others.
fn repr_leaf(value: AnyView<'_>, show_addr: bool, out: &mut String) -> Result<bool> {
    let ti = value.type_index();
    match ti {
        kTVMFFINone => out.push_str("None"),
        kTVMFFIBool => out.push_str(if value.as_i64().unwrap_or(0) != 0 {
            "True"
        } else {
            "False"
        }),
        kTVMFFIInt => out.push_str(&value.as_i64().unwrap_or(0).to_string()),
        kTVMFFIFloat => out.push_str(&float_text(value.as_f64().unwrap_or(0.0))),
        _ => {
            if let Some(dt) = value.as_dtype() {
                out.push_str(&crate::core::value::dtype::to_string(dt)?);
            } else if let Some(d) = value.as_device() {
                out.push_str(&device_text(d));
            } else if let Some(t) = text_of(value, TextKind::Str) {
                out.push_str(&escaped_string(t));
            } else if let Some(t) = text_of(value, TextKind::Bytes) {
                out.push_str(&bytes_text(t));
            } else if !is_object_index(ti) {
                out.push_str(&type_key_of(ti));
            } else if let Some(obj) = value.to_object() {
                match ti {
                    kTVMFFIBigInt => out.push_str(&big_int_to_string(
                        crate::core::value::scalar::big_int_words(value).unwrap_or(&[]),
                    )),
                    kTVMFFITensor => {
                        let t = crate::core::value::tensor::dl_tensor(&obj)?;
                        let dims: Vec<String> = crate::core::value::tensor::shape(&obj)?
                            .iter()
                            .map(i64::to_string)
                            .collect();
                        out.push_str(&format!(
                            "{}[{}]@{}",
                            crate::core::value::dtype::to_string(t.dtype)?,
                            dims.join(", "),
                            device_text(t.device)
                        ));
                        if show_addr {
                            out.push_str(&format!("@{}", addr(&obj)));
                        }
                    }
                    kTVMFFIShape => {
                        let dims: Vec<String> = crate::core::value::scalar::shape_dims(&obj)
                            .unwrap_or(&[])
                            .iter()
                            .map(i64::to_string)
                            .collect();
                        out.push_str(&format!("Shape({})", dims.join(", ")));
                    }
                    _ => return Ok(false),
                }
            } else {
                out.push_str("None");
            }
        }
    }
    Ok(true)
}

fn repr_level(
    state: &Arc<Mutex<ReprState>>,
    value: AnyView<'_>,
    depth: usize,
    out: &mut Out<'_>,
) -> Result<()> {
    let ti = value.type_index();
    let show_addr = rlock(state).show_addr;
    let obj = match value.to_object() {
        Some(obj) if is_object_index(ti) => obj,
        _ => {
            repr_leaf(value, show_addr, out.text)?;
            return Ok(());
        }
    };
    let key = obj.as_ptr() as usize;
    {
        let s = rlock(state);
        match s.done.get(&key) {
            Some(Printed::At(range)) if out.main => {
                let range = range.clone();
                drop(s);
                out.text.extend_from_within(range);
                return Ok(());
            }
            Some(Printed::Text(text)) => {
                out.text.push_str(text.as_str());
                return Ok(());
            }
            _ => {}
        }
        if s.in_progress.contains(&key) {
            out.text.push_str("...");
            if s.show_addr {
                out.text.push_str(&format!("@{}", addr(&obj)));
            }
            return Ok(());
        }
    }
    if obj == crate::core::model::object::invalid_object() {
        out.text.push_str("<MISSING>");
        return Ok(());
    }
    if obj == crate::core::model::object::kwargs_object() {
        out.text.push_str("<KWARGS>");
        return Ok(());
    }
    if repr_leaf(value, show_addr, out.text)? {
        return Ok(());
    }
    if depth >= MAX_DEPTH {
        return Err(too_deep("ReprPrint"));
    }
    let start = out.text.len();
    // Records what was printed from `start` (for objects met again):
    // positions in the main buffer; texts, up to a budget, in a hook's.
    let finish = |out: &mut Out<'_>| {
        let mut s = rlock(state);
        s.in_progress.remove(&key);
        if out.main {
            s.done.insert(key, Printed::At(start..out.text.len()));
        } else {
            let text = &out.text[start..];
            if s.done_bytes + text.len() <= REPR_CACHE_BYTES {
                s.done_bytes += text.len();
                s.done.insert(key, Printed::Text(text.to_string()));
            }
        }
    };
    if let Some(f) = hook("__ffi_repr__", ti) {
        rlock(state).in_progress.insert(key);
        let inner = state.clone();
        let callback = Function::from_closure(move |args| {
            args.expect_len("fn_repr", 1)?;
            let mut text = String::new();
            repr(&inner, args.get(0), 0, &mut Out::hook(&mut text))?;
            Ok(crate::core::model::string::make_text(
                text.as_bytes(),
                TextKind::Str,
            ))
        });
        let (o, cb) = (Any::from(obj.clone()), Any::from(callback.into_object()));
        let text = f.call(&[o.view(), cb.view()]).and_then(|v| {
            v.view()
                .as_str_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .ok_or_else(|| Error::type_error("__ffi_repr__ must return a string"))
        });
        let text = match text {
            Ok(text) => text,
            Err(e) => {
                rlock(state).in_progress.remove(&key);
                return Err(e);
            }
        };
        out.text.push_str(&text);
        if show_addr && is_container(ti) {
            out.text.push_str(&format!("@{}", addr(&obj)));
        }
        finish(out);
        return Ok(());
    }
    if crate::core::model::lineage::is_instance(ti, kEnum) {
        // SAFETY: enum objects have the EnumObj layout.
        let e = unsafe { obj.payload::<crate::core::reflect::reflected::EnumObj>() };
        let name = e.str_index.0.view().as_str_bytes().unwrap_or(b"");
        out.text.push_str(&format!(
            "{}.{}",
            type_key_of(ti),
            String::from_utf8_lossy(name)
        ));
        if show_addr {
            out.text.push_str(&format!("@{}", addr(&obj)));
        }
        finish(out);
        return Ok(());
    }
    {
        let mut s = rlock(state);
        s.in_progress.insert(key);
        s.composed |= depth == 0;
    }
    match repr_children(state, &obj, depth, show_addr, out) {
        Ok(()) => {
            finish(out);
            Ok(())
        }
        Err(e) => {
            rlock(state).in_progress.remove(&key);
            Err(e)
        }
    }
}

/// Writes the items of a container or the fields of a reflected object.
fn repr_children(
    state: &Arc<Mutex<ReprState>>,
    obj: &ObjectRef,
    depth: usize,
    show_addr: bool,
    out: &mut Out<'_>,
) -> Result<()> {
    let ti = obj.type_index();
    let each = |items: &[Any], out: &mut Out<'_>| -> Result<()> {
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                out.text.push_str(", ");
            }
            repr(state, v.view(), depth + 1, out)?;
        }
        Ok(())
    };
    match ti {
        kTVMFFIArray => {
            let items = elements(obj)?;
            out.text.push('(');
            each(&items, out)?;
            out.text.push_str(if items.len() == 1 { ",)" } else { ")" });
        }
        kTVMFFIList => {
            out.text.push('[');
            each(&elements(obj)?, out)?;
            out.text.push(']');
        }
        kTVMFFIMap | kTVMFFIDict => {
            out.text.push('{');
            for (i, (k, v)) in map::items(obj)?.iter().enumerate() {
                if i > 0 {
                    out.text.push_str(", ");
                }
                repr(state, k.view(), depth + 1, out)?;
                out.text.push_str(": ");
                repr(state, v.view(), depth + 1, out)?;
            }
            out.text.push('}');
        }
        _ => {
            out.text.push_str(&type_key_of(ti));
            if show_addr {
                out.text.push_str(&format!("@{}", addr(obj)));
            }
            let fields = field_values(obj, kTVMFFIFieldFlagBitMaskReprOff)?;
            if fields.is_empty() {
                return Ok(());
            }
            let mut seen = HashSet::new();
            out.text.push('(');
            for (info, v) in &fields {
                // SAFETY: field names live in the type table's pool.
                let name = unsafe { crate::core::model::bytes::byte_slice(info.name) };
                // A name shadowed by a subclass is shown once, as first met.
                if !seen.insert(name) {
                    continue;
                }
                if seen.len() > 1 {
                    out.text.push_str(", ");
                }
                out.text.push_str(&String::from_utf8_lossy(name));
                out.text.push('=');
                repr(state, v.view(), depth + 1, out)?;
            }
            out.text.push(')');
            return Ok(());
        }
    }
    if show_addr {
        out.text.push_str(&format!("@{}", addr(obj)));
    }
    Ok(())
}

/// `recursive_compare` of the arguments as owned values (the reference
/// takes `Any`: a raw C string becomes a String, which its messages show).
fn compare_owned(l: AnyView<'_>, r: AnyView<'_>, eq_only: bool) -> Result<i32> {
    let (l, r) = (l.to_owned_any()?, r.to_owned_any()?);
    recursive_compare(l.view(), r.view(), eq_only)
}

/// Registers `ffi.ReprPrint`, `ffi.RecursiveHash` and `ffi.Recursive{Eq,Lt,Le,Gt,Ge}`.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!("ffi.ReprPrint", |value: AnyView<'_>| -> StrAny {
        let (text, composed) = repr_print(value.to_owned_any()?.view())?;
        // Composed texts are heap strings in the reference.
        Ok(StrAny(if composed {
            Any::from(crate::core::model::string::new_text_object(
                text.as_bytes(),
                TextKind::Str,
            ))
        } else {
            crate::core::model::string::make_text(text.as_bytes(), TextKind::Str)
        }))
    }));
    g.add(typed_fn!(
        "ffi.RecursiveHash",
        |value: AnyView<'_>| -> i64 { recursive_hash(value.to_owned_any()?.view()) }
    ));
    g.add(typed_fn!("ffi.RecursiveEq", |l: AnyView<'_>,
                                        r: AnyView<'_>|
     -> bool {
        Ok(compare_owned(l, r, true)? == 0)
    }));
    g.add(typed_fn!("ffi.RecursiveLt", |l: AnyView<'_>,
                                        r: AnyView<'_>|
     -> bool {
        Ok(compare_owned(l, r, false)? < 0)
    }));
    g.add(typed_fn!("ffi.RecursiveLe", |l: AnyView<'_>,
                                        r: AnyView<'_>|
     -> bool {
        Ok(compare_owned(l, r, false)? <= 0)
    }));
    g.add(typed_fn!("ffi.RecursiveGt", |l: AnyView<'_>,
                                        r: AnyView<'_>|
     -> bool {
        Ok(compare_owned(l, r, false)? > 0)
    }));
    g.add(typed_fn!("ffi.RecursiveGe", |l: AnyView<'_>,
                                        r: AnyView<'_>|
     -> bool {
        Ok(compare_owned(l, r, false)? >= 0)
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_on_a_small_stack() {
        // Two equal chains of 20k nested lists, walked on a thread with a
        // 256 KiB stack.
        let chain = || {
            let mut v = Any::from(seq::new_list(Vec::new()));
            for _ in 0..20_000 {
                v = Any::from(seq::new_list(vec![v]));
            }
            v
        };
        let (a, b) = (chain(), chain());
        let (eq, hashes_equal, repr_len, a, b) = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let eq = recursive_compare(a.view(), b.view(), true).unwrap();
                let hashes_equal =
                    recursive_hash(a.view()).unwrap() == recursive_hash(b.view()).unwrap();
                let (repr, _) = repr_print(a.view()).unwrap();
                (eq, hashes_equal, repr.len(), a, b)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(eq, 0);
        assert!(hashes_equal);
        assert_eq!(repr_len, 40_002);
        // Releasing the chains recurses through the lists' deleters, which
        // grow the stack as the walks do.
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || drop((a, b)))
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn string_escapes_like_python() {
        assert_eq!(escaped_string(b"a\"b\n"), r#""a\"b\n""#);
        assert_eq!(escaped_string("é".as_bytes()), r#""\u00e9""#);
        assert_eq!(escaped_string(b"\x01"), r#""\x01""#);
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(1e20), "1e+20");
    }
}
