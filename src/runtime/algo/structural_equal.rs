//! `ffi.StructuralEqual` and `ffi.GetFirstStructuralMismatch`: equality of
//! values by structure, with the reference's semantics.
//!
//! - Values of different types differ, except a small and a heap string (or
//!   bytes) of the same text. POD values compare by bits, every NaN equal to
//!   every NaN. Strings, bytes and BigInts compare by content; arrays and
//!   lists element by element; maps and dicts key by key (keys translated
//!   through the free-variable mapping); shapes by dimensions; tensors by
//!   shape, dtype and (unless skipped) their CPU bytes.
//! - Objects compare by their type's `structural_eq_hash_kind`: unique
//!   instances by identity; const tree nodes by identity, else by fields;
//!   DAG nodes by fields, remembering the pairing so a shared node must map
//!   to the same node; free variables bind to each other on first sight
//!   inside a definition region (or when identical), and must then keep
//!   that pairing. Fields flagged `SEqHashIgnore` are skipped; fields
//!   flagged `SEqHashDef*` open a definition region; a type's
//!   `__s_equal__` attribute replaces the field walk.
//! - `GetFirstStructuralMismatch` answers the pair of access paths to the
//!   first difference, or None.
//!
//! The state lives behind a lock that is never held across a nested
//! comparison or a hook, so `__s_equal__` callbacks can re-enter.

use crate::abi::*;
use crate::platform::address_map::AddrMap;
use crate::runtime::algo::traversal::{
    Local, PathGuard, entering, hook_region, kind_of, outside_simple, region_of_flags, with_region,
};
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{Ret, Schema};
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, str_bytes_of};
use crate::runtime::model::type_table::{self, Facts, Hook};
use crate::runtime::reflect::field::get_field;
use crate::runtime::reflect::reflected::{extend_path, new_step, root_path};
use crate::runtime::value::scalar::{big_int_words, shape_dims};
use crate::runtime::{value::map, value::seq, value::tensor};
use core::cell::RefMut;
use std::sync::Arc;

/// `AccessKind` values of the steps a mismatch path records.
const ATTR: i32 = 0;
const ARRAY_ITEM: i32 = 1;
const MAP_ITEM: i32 = 2;
const ARRAY_ITEM_MISSING: i32 = 4;
const MAP_ITEM_MISSING: i32 = 5;

/// The comparison state.
struct State {
    /// The current definition region kind.
    def_region: i32,
    skip_tensor_content: bool,
    /// Whether mismatch paths are recorded (GetFirstStructuralMismatch).
    trace: bool,
    /// The steps to the first mismatch, innermost first.
    lhs_steps: Vec<ObjectRef>,
    rhs_steps: Vec<ObjectRef>,
    /// Pairings found so far, by object address, both ways.
    lhs_to_rhs: AddrMap<usize, ObjectRef>,
    rhs_to_lhs: AddrMap<usize, ObjectRef>,
    /// Pairs of objects on the path from the root (cycles and depth).
    on_path: PathGuard<(usize, usize)>,
}

type Shared = Arc<Local<State>>;

fn lock(s: &Shared) -> RefMut<'_, State> {
    s.get()
}

fn addr(o: &ObjectRef) -> usize {
    o.as_ptr() as usize
}

/// Records one step on each side of a mismatch.
fn record(s: &Shared, lhs: (i32, Any), rhs: (i32, Any)) {
    let mut st = lock(s);
    if st.trace {
        st.lhs_steps.push(new_step(lhs.0, lhs.1));
        st.rhs_steps.push(new_step(rhs.0, rhs.1));
    }
}

/// The definition region field of the comparison state.
fn region(st: &mut State) -> &mut i32 {
    &mut st.def_region
}

/// The text of a str or bytes value of either representation.
fn text(v: AnyView<'_>) -> Option<(&[u8], bool)> {
    match v.type_index() {
        kTVMFFIStr | kTVMFFISmallStr => str_bytes_of(v, TextKind::Str).map(|t| (t, true)),
        kTVMFFIBytes | kTVMFFISmallBytes => str_bytes_of(v, TextKind::Bytes).map(|t| (t, false)),
        _ => None,
    }
}

/// Compares two values.
fn equal(s: &Shared, l: AnyView<'_>, r: AnyView<'_>) -> Result<bool> {
    let (Some(a), Some(b)) = (l.as_object_ptr(), r.as_object_ptr()) else {
        return equal_level(s, l, r);
    };
    let pair = (a.as_ptr() as usize, b.as_ptr() as usize);
    let tracked = lock(s).on_path.enter(pair, "StructuralEqual")?;
    let out = crate::runtime::model::depth::deep(|| equal_level(s, l, r));
    lock(s).on_path.leave(pair, tracked);
    out
}

fn equal_level(s: &Shared, l: AnyView<'_>, r: AnyView<'_>) -> Result<bool> {
    let (lt, rt) = (l.type_index(), r.type_index());
    if lt != rt {
        // A small and a heap string (or bytes) of the same text are equal.
        return Ok(matches!((text(l), text(r)), (Some(a), Some(b)) if a == b));
    }
    if !is_object_index(lt) {
        let (lr, rr) = (l.raw(), r.raw());
        // SAFETY: POD values; floats are read as floats, the rest as bits.
        unsafe {
            if lt == kTVMFFIFloat && lr.value.v_float64.is_nan() {
                return Ok(rr.value.v_float64.is_nan());
            }
            return Ok(lr.small_str_len == rr.small_str_len && lr.value.v_int64 == rr.value.v_int64);
        }
    }
    let (lo, ro) = match (l.borrow_object(), r.borrow_object()) {
        (Some(a), Some(b)) => (a, b),
        _ => return Ok(false),
    };
    match lt {
        kTVMFFIBigInt => Ok(big_int_words(l) == big_int_words(r)),
        kTVMFFIStr | kTVMFFIBytes => Ok(text(l) == text(r)),
        kTVMFFIArray | kTVMFFIList => equal_seq(s, &lo, &ro),
        kTVMFFIMap | kTVMFFIDict => equal_map(s, &lo, &ro),
        kTVMFFIShape => Ok(shape_dims(&lo) == shape_dims(&ro)),
        kTVMFFITensor => equal_tensor(s, &lo, &ro),
        _ => equal_object(s, &lo, &ro),
    }
}

fn equal_seq(s: &Shared, lo: &ObjectRef, ro: &ObjectRef) -> Result<bool> {
    // Arrays borrowed, Lists copied: a hook may change a List while it is
    // compared (`seq::Stable`).
    let (ls, rs) = (seq::stable_elements(lo)?, seq::stable_elements(ro)?);
    fn views<'a>(e: &'a seq::Stable<'_>) -> Vec<AnyView<'a>> {
        e.views().collect()
    }
    equal_items(s, &views(&ls), &views(&rs))
}

fn equal_items(s: &Shared, ls: &[AnyView<'_>], rs: &[AnyView<'_>]) -> Result<bool> {
    let (a, b) = (ls.len(), rs.len());
    let trace = lock(s).trace;
    if a != b && !trace {
        return Ok(false);
    }
    for (i, (x, y)) in ls.iter().zip(rs).enumerate() {
        if !equal(s, *x, *y)? {
            record(
                s,
                (ARRAY_ITEM, Any::from(i as i64)),
                (ARRAY_ITEM, Any::from(i as i64)),
            );
            return Ok(false);
        }
    }
    if a == b {
        return Ok(true);
    }
    let n = Any::from(a.min(b) as i64);
    if a > b {
        record(s, (ARRAY_ITEM, n.clone()), (ARRAY_ITEM_MISSING, n));
    } else {
        record(s, (ARRAY_ITEM_MISSING, n.clone()), (ARRAY_ITEM, n));
    }
    Ok(false)
}

/// `key` translated through the pairing (`forward`: lhs to rhs).
fn mapped(s: &Shared, key: &Any, forward: bool) -> Any {
    match key.view().to_object() {
        Some(o) => {
            let st = lock(s);
            let pairs = if forward {
                &st.lhs_to_rhs
            } else {
                &st.rhs_to_lhs
            };
            pairs
                .get(&addr(&o))
                .cloned()
                .map_or_else(|| key.clone(), Any::from)
        }
        None => key.clone(),
    }
}

fn equal_map(s: &Shared, lo: &ObjectRef, ro: &ObjectRef) -> Result<bool> {
    let trace = lock(s).trace;
    let same_size = map::size(lo)? == map::size(ro)?;
    if !same_size && !trace {
        return Ok(false);
    }
    for (k, v) in map::items(lo)? {
        let rk = mapped(s, &k, true);
        let Some(rv) = map::get(ro, rk.view())? else {
            record(s, (MAP_ITEM, k), (MAP_ITEM_MISSING, rk));
            return Ok(false);
        };
        if !equal(s, v.view(), rv.view())? {
            record(s, (MAP_ITEM, k), (MAP_ITEM, rk));
            return Ok(false);
        }
    }
    if same_size {
        return Ok(true);
    }
    for (k, _) in map::items(ro)? {
        let lk = mapped(s, &k, false);
        if map::get(lo, lk.view())?.is_none() {
            record(s, (MAP_ITEM_MISSING, lk), (MAP_ITEM, k));
            return Ok(false);
        }
    }
    Ok(false)
}

fn equal_tensor(s: &Shared, lo: &ObjectRef, ro: &ObjectRef) -> Result<bool> {
    if lo == ro {
        return Ok(true);
    }
    let (a, b) = (tensor::dl_tensor(lo)?, tensor::dl_tensor(ro)?);
    if tensor::shape(lo)? != tensor::shape(ro)? || a.dtype != b.dtype {
        return Ok(false);
    }
    if lock(s).skip_tensor_content {
        return Ok(true);
    }
    fn bytes(t: &ObjectRef) -> Result<&[u8]> {
        tensor::compact_cpu_bytes(t)
            .map_err(|e| e.rewrap(|m| format!("can only compare contiguous CPU tensors: {m}")))
    }
    Ok(bytes(lo)? == bytes(ro)?)
}

fn equal_object(s: &Shared, lo: &ObjectRef, ro: &ObjectRef) -> Result<bool> {
    let ti = lo.type_index();
    let facts = type_table::facts(ti)?;
    let kind = kind_of(ti, facts.kind)?;
    if kind == kTVMFFISEqHashKindUniqueInstance {
        return Ok(lo == ro);
    }
    if kind == kTVMFFISEqHashKindConstTreeNode && lo == ro {
        return Ok(true);
    }
    if kind == kTVMFFISEqHashKindDAGNode || kind == kTVMFFISEqHashKindFreeVar {
        let st = lock(s);
        if let Some(paired) = st.lhs_to_rhs.get(&addr(lo)) {
            return Ok(paired == ro);
        }
        if st.rhs_to_lhs.contains_key(&addr(ro)) {
            return Ok(false);
        }
    }
    let pair = |s: &Shared| {
        let mut st = lock(s);
        st.lhs_to_rhs.insert(addr(lo), ro.clone());
        st.rhs_to_lhs.insert(addr(ro), lo.clone());
    };
    if kind != kTVMFFISEqHashKindFreeVar {
        let ok = equal_fields(s, &facts, lo, ro)?;
        if ok && kind == kTVMFFISEqHashKindDAGNode {
            pair(s);
        }
        return Ok(ok);
    }
    // A free variable's own fields are compared outside a simple region.
    let current = lock(s).def_region;
    let ok = with_region(s, region, outside_simple, || {
        equal_fields(s, &facts, lo, ro)
    })?;
    if !ok {
        return Ok(false);
    }
    if lo == ro || current != kTVMFFIDefRegionKindNone {
        pair(s);
        return Ok(true);
    }
    Ok(false)
}

fn equal_fields(s: &Shared, facts: &Facts, lo: &ObjectRef, ro: &ObjectRef) -> Result<bool> {
    if let Some(hook) = facts
        .hook(Hook::SEqual)
        .to_object()
        .and_then(Function::from_object)
    {
        return custom_equal(s, &hook, lo, ro);
    }
    for f in facts.fields.iter() {
        if f.flags & i64::from(kTVMFFIFieldFlagBitMaskSEqHashIgnore) != 0 {
            continue;
        }
        let (a, b) = (get_field(lo, f)?, get_field(ro, f)?);
        let ok = match region_of_flags(f.flags) {
            Some(kind) => with_region(s, region, entering(kind), || equal(s, a.view(), b.view()))?,
            None => equal(s, a.view(), b.view())?,
        };
        if !ok {
            // SAFETY: field names live in the type table's pool forever.
            let name = unsafe { crate::runtime::model::bytes::byte_slice(f.name) };
            let name = crate::runtime::model::string::make_text(name, TextKind::Str);
            record(s, (ATTR, name.clone()), (ATTR, name));
            return Ok(false);
        }
    }
    Ok(true)
}

/// `__s_equal__(lhs, rhs, compare)`: `compare(lhs, rhs, def_region_kind,
/// field_name)` compares sub-values for the hook.
fn custom_equal(s: &Shared, hook: &Function, lo: &ObjectRef, ro: &ObjectRef) -> Result<bool> {
    let inner = s.clone();
    let compare = Function::from_closure(move |args| {
        args.expect_len("__s_equal__ callback", 4)?;
        let kind = args.get(2).as_i64().unwrap_or(0) as i32;
        let ok = with_region(&inner, region, hook_region(kind), || {
            equal(&inner, args.get(0), args.get(1))
        })?;
        if !ok {
            let name = args.get(3).to_owned_any()?;
            record(&inner, (ATTR, name.clone()), (ATTR, name));
        }
        Ok(Any::from(ok))
    });
    let (l, r, c) = (
        Any::from(lo.clone()),
        Any::from(ro.clone()),
        Any::from(compare.into_object()),
    );
    let out = hook.call(&[l.view(), r.view(), c.view()])?;
    match out.view().type_index() {
        kTVMFFIBool | kTVMFFIInt => Ok(out.view().as_i64() != Some(0)),
        _ => Err(Error::type_error("`__s_equal__` must return a bool")),
    }
}

/// A fresh comparison state.
fn state(map_free_vars: bool, skip_tensor_content: bool, trace: bool) -> Shared {
    Local::new(State {
        def_region: if map_free_vars {
            kTVMFFIDefRegionKindPattern
        } else {
            kTVMFFIDefRegionKindNone
        },
        skip_tensor_content,
        trace,
        lhs_steps: Vec::new(),
        rhs_steps: Vec::new(),
        lhs_to_rhs: AddrMap::default(),
        rhs_to_lhs: AddrMap::default(),
        on_path: PathGuard::default(),
    })
}

/// `ffi.StructuralEqual(lhs, rhs, map_free_vars, skip_tensor_content)`.
pub fn structural_equal(
    lhs: AnyView<'_>,
    rhs: AnyView<'_>,
    map_free_vars: bool,
    skip_tensor_content: bool,
) -> Result<bool> {
    equal(&state(map_free_vars, skip_tensor_content, false), lhs, rhs)
}

/// `ffi.GetFirstStructuralMismatch`: the access paths `(lhs, rhs)` to the
/// first difference, or None when the values are equal.
pub fn first_mismatch(
    lhs: AnyView<'_>,
    rhs: AnyView<'_>,
    map_free_vars: bool,
    skip_tensor_content: bool,
) -> Result<Option<(ObjectRef, ObjectRef)>> {
    let s = state(map_free_vars, skip_tensor_content, true);
    if equal(&s, lhs, rhs)? {
        return Ok(None);
    }
    let st = lock(&s);
    let path = |steps: &[ObjectRef]| {
        steps
            .iter()
            .rev()
            .fold(root_path(), |p, step| extend_path(&p, step.clone()))
    };
    Ok(Some((path(&st.lhs_steps), path(&st.rhs_steps))))
}

/// A `Tuple<AccessPath, AccessPath>` result: the two sides of a mismatch.
pub struct PathPair((ObjectRef, ObjectRef));

impl Ret for PathPair {
    fn schema() -> Schema {
        let path = || Schema::object("ffi.reflection.AccessPath");
        Schema::tuple(vec![path(), path()])
    }
    fn into_any(self) -> Result<Any> {
        let (l, r) = self.0;
        Ok(Any::from(seq::new_array(vec![Any::from(l), Any::from(r)])))
    }
}

/// Registers the structural equality globals.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.StructuralEqual",
        |lhs: AnyView<'_>,
         rhs: AnyView<'_>,
         map_free_vars: bool,
         skip_tensor_content: bool|
         -> bool { structural_equal(lhs, rhs, map_free_vars, skip_tensor_content) }
    ));
    g.add(typed_fn!(
        "ffi.GetFirstStructuralMismatch",
        |lhs: AnyView<'_>,
         rhs: AnyView<'_>,
         map_free_vars: bool,
         skip_tensor_content: bool|
         -> Option<PathPair> {
            Ok(first_mismatch(lhs, rhs, map_free_vars, skip_tensor_content)?.map(PathPair))
        }
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::string::make_text;

    fn s(t: &str) -> Any {
        make_text(t.as_bytes(), TextKind::Str)
    }

    #[test]
    fn values_containers_and_mismatch_paths() {
        let eq = |a: &Any, b: &Any| structural_equal(a.view(), b.view(), false, false).unwrap();
        assert!(eq(&s("abc"), &s("abc")));
        assert!(eq(
            &s("a long string on the heap"),
            &s("a long string on the heap")
        ));
        assert!(eq(&Any::from(f64::NAN), &Any::from(-f64::NAN)));
        assert!(!eq(&Any::from(1i64), &Any::from(1.0f64)));
        let arr = |v: Vec<Any>| Any::from(seq::new_array(v));
        let a = arr(vec![Any::from(1i64), s("x")]);
        let b = arr(vec![Any::from(1i64), s("y")]);
        assert!(eq(&a, &a.clone()) && !eq(&a, &b));
        let (l, r) = first_mismatch(a.view(), b.view(), false, false)
            .unwrap()
            .unwrap();
        let step = |p: &ObjectRef| crate::runtime::reflect::reflected::path_steps(p).len();
        assert_eq!((step(&l), step(&r)), (1, 1));
        assert!(
            first_mismatch(a.view(), a.view(), false, false)
                .unwrap()
                .is_none()
        );
        let m =
            |k: &str, v: i64| Any::from(map::new_map(kTVMFFIMap, [(s(k), Any::from(v))]).unwrap());
        assert!(
            eq(&m("k", 1), &m("k", 1))
                && !eq(&m("k", 1), &m("k", 2))
                && !eq(&m("k", 1), &m("j", 1))
        );
    }
}
