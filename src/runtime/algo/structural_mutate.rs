//! Structural mutators: `ffi.StructuralMap` (replacement callbacks before or
//! after the children), `ffi.StructuralMutate` (a matched callback owns its
//! value's mutation), the `ffi.StructuralMutator*` methods callbacks use,
//! and the `__s_mutate__`/`__s_maybe_inplace_mutate__` hooks of the
//! built-in types.
//!
//! Mutation is copy-on-write: a sub-tree nothing changed in is returned as
//! it is (the result is the reference's "unchanged" marker, type index
//! `kTVMFFIUnchanged`), and a changed object is a shallow copy with the
//! changed fields set. A value reached only through unique references (the
//! root moved in by the caller, then uniquely owned children) may be changed
//! in place instead. Variables (`FreeVar`) and DAG nodes are mutated once
//! and their results reused through the mutator's variable remap.
//!
//! A mutator object has the reference's `StructuralMutatorObj` layout (a
//! vtable of mutate, in-place mutate, remap get and remap set, then the
//! definition region); C++ mutators and hooks interoperate with ours through
//! it, as for visitors (see [`crate::runtime::algo::structural_visit`]).

use crate::abi::*;
use crate::runtime::algo::structural_visit::{
    Callbacks, Traversal, TraversalHead, TraversalVTable, container, level, payload_of,
};
use crate::runtime::algo::traversal::{entering, outside_simple, region_of_flags};
use crate::runtime::algo::visit_error_context::attach;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{FunctionT, Obj, ObjType, Schema, View, obj_type};
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::boundary::catch_to_expected;
use crate::runtime::model::bytes::byte_slice;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::lineage::is_instance;
use crate::runtime::model::object::{Cell, ObjectRef, new_object};
use crate::runtime::model::type_table::{self, Facts, Hook, Table, type_key_of};
use crate::runtime::reflect::field::get_field;
use crate::runtime::reflect::field::{call_setter, field_addr};
use crate::runtime::reflect::reflected::kStructuralMutator;
use crate::runtime::reflect::type_def::TypeDef;
use crate::runtime::{value::map, value::seq};
use core::ffi::c_void;
use std::collections::HashMap;
use std::sync::Mutex;

/// The ABI of the mutate entries and of native `__s_mutate__` hooks:
/// `(mutator, value) -> replacement | unchanged marker | Error`; also of the
/// remap lookup (`(mutator, var) -> value | None | Error`).
pub type MutateFn = unsafe extern "C" fn(*mut TVMFFIObject, TVMFFIAny) -> TVMFFIAny;
/// The ABI of the remap store: `(mutator, var, value) -> None | Error`.
pub type RemapSetFn = unsafe extern "C" fn(*mut TVMFFIObject, TVMFFIAny, TVMFFIAny) -> TVMFFIAny;

/// The reference's `StructuralMutatorVTable`.
#[repr(C)]
pub struct MutatorVTable {
    /// Mutates a value without changing it in place.
    pub mutate: Option<MutateFn>,
    /// Mutates a uniquely owned value, in place if it likes.
    pub maybe_inplace_mutate: Option<MutateFn>,
    /// Looks up a variable's replacement.
    pub var_remap_get: Option<MutateFn>,
    /// Records a variable's replacement.
    pub var_remap_set: Option<RemapSetFn>,
}

/// The head of a mutator.
pub type MutatorHead = TraversalHead<MutatorVTable>;

// SAFETY: every object of type `ffi.StructuralMutator` or a subclass is a (C++
// or Rust) `StructuralMutatorObj` (subclasses begin with their parent's layout),
// whose fields after the header are these; the base type has no creator,
// and a subclass made without C++ (zeroed by a generic creator) has a NULL
// vtable, which `TraversalHead::vtable` refuses.
unsafe impl Cell for MutatorHead {
    fn holds(type_index: i32) -> bool {
        is_instance(type_index, kStructuralMutator)
    }
}

const _: () = {
    assert!(size_of::<MutatorHead>() == 16);
    assert!(size_of::<MutatorVTable>() == 32);
};

obj_type!(
    /// `ffi.StructuralMutator`.
    StructuralMutatorT,
    Schema::object("ffi.StructuralMutator"),
    kStructuralMutator
);

/// A mutation's result: the value unchanged, or its replacement.
pub enum Mutated {
    /// Keep the original.
    Unchanged,
    /// The replacement (possibly the original object, changed in place).
    Value(Any),
}

impl Mutated {
    /// The replacement, or `original` when unchanged.
    pub fn or(self, original: AnyView<'_>) -> Result<Any> {
        match self {
            Mutated::Unchanged => original.to_owned_any(),
            Mutated::Value(v) => Ok(v),
        }
    }

    /// Whether this keeps `original` (unchanged, or the same value).
    fn keeps(&self, original: AnyView<'_>) -> bool {
        match self {
            Mutated::Unchanged => true,
            Mutated::Value(v) => v.view().same_as(original),
        }
    }

    /// The result as one value (the unchanged marker for `Unchanged`).
    fn into_any(self) -> Any {
        match self {
            // SAFETY: the marker is a plain value without ownership.
            Mutated::Unchanged => unsafe {
                Any::from_raw(TVMFFIAny {
                    type_index: kTVMFFIUnchanged,
                    ..TVMFFIAny::NONE
                })
            },
            Mutated::Value(v) => v,
        }
    }

    /// A value read back (the marker becomes `Unchanged`).
    fn from_any(v: Any) -> Mutated {
        if v.type_index() == kTVMFFIUnchanged {
            Mutated::Unchanged
        } else {
            Mutated::Value(v)
        }
    }
}

/// An owned result handed over by a hook or vtable entry: the value, or the
/// Error it carries.
fn decode(raw: TVMFFIAny) -> Result<Any> {
    // SAFETY: the callee hands over an owned value.
    crate::runtime::call::function::expected(unsafe { Any::from_raw(raw) })
}

/// Whether `value` is an object only the caller references.
fn unique(value: AnyView<'_>) -> bool {
    value.borrow_object().is_some_and(|o| o.strong_count() == 1)
}

impl TraversalVTable for MutatorVTable {
    const KEY: &'static str = "ffi.StructuralMutator";
    const INDEX: i32 = kStructuralMutator;
}

/// A borrowed mutator object, ours or C++'s.
pub type Mutator<'a> = Traversal<'a, MutatorVTable>;

impl<'a> Mutator<'a> {
    fn vtable(self) -> Result<&'a MutatorVTable> {
        self.head()
            .vtable()
            .ok_or_else(|| Error::type_error("the ffi.StructuralMutator has no vtable"))
    }

    fn entry<F>(self, f: impl FnOnce(&MutatorVTable) -> Option<F>) -> Result<F> {
        f(self.vtable()?)
            .ok_or_else(|| Error::type_error("the ffi.StructuralMutator's vtable has a NULL entry"))
    }

    /// Mutates `value` through the vtable (`MutateExpected`): in place only
    /// when `inplace` allows it and the value is uniquely owned.
    pub fn mutate(self, value: AnyView<'_>, inplace: bool) -> Result<Mutated> {
        let f = if inplace && unique(value) {
            self.entry(|v| v.maybe_inplace_mutate)?
        } else {
            self.entry(|v| v.mutate)?
        };
        // SAFETY: the mutator and the value are live for the call.
        decode(unsafe { f(self.as_ptr(), *value.raw()) }).map(Mutated::from_any)
    }

    /// The variable remap's entry for `var` (None when it has none).
    pub fn remap_get(self, var: AnyView<'_>) -> Result<Any> {
        let f = self.entry(|v| v.var_remap_get)?;
        // SAFETY: the mutator and the value are live for the call.
        decode(unsafe { f(self.as_ptr(), *var.raw()) })
    }

    /// Records `value` as the replacement of `var`.
    pub fn remap_set(self, var: AnyView<'_>, value: AnyView<'_>) -> Result<()> {
        let f = self.entry(|v| v.var_remap_set)?;
        // SAFETY: the mutator and the values are live for the call.
        decode(unsafe { f(self.as_ptr(), *var.raw(), *value.raw()) }).map(drop)
    }

    /// The mutation registered for the value's type, or the default one
    /// (`DefaultMutateExpected`).
    pub fn default_mutate(self, value: AnyView<'_>, inplace: bool) -> Result<Mutated> {
        if !inplace {
            return self.default_copying(value);
        }
        let facts = type_table::facts(value.type_index())?;
        let hook = facts.hook(Hook::SMaybeInplaceMutate);
        match hook.type_index() {
            kTVMFFIOpaquePtr | kTVMFFIFunction => {
                self.call_hook(hook, value).map_err(|e| attach(e, value))
            }
            _ => self.default_copying(value),
        }
    }

    /// Calls a `__s_mutate__`-style hook: a native function or a Function.
    fn call_hook(self, hook: AnyView<'_>, value: AnyView<'_>) -> Result<Mutated> {
        if let Some(ptr) = hook.as_opaque_ptr().filter(|p| !p.is_null()) {
            // SAFETY: an opaque mutate hook entry is a `MutateFn` (the
            // attribute's documented ABI).
            let f: MutateFn = unsafe { core::mem::transmute::<*mut c_void, MutateFn>(ptr) };
            // SAFETY: the mutator and the value are live for the call.
            return decode(unsafe { f(self.as_ptr(), *value.raw()) }).map(Mutated::from_any);
        }
        let f = hook
            .to_object()
            .and_then(Function::from_object)
            .ok_or_else(|| {
                Error::type_error("__s_mutate__ must be a direct hook pointer or ffi.Function")
            })?;
        let me = Any::from(self.to_object());
        f.call_expected(&[me.view(), value]).map(Mutated::from_any)
    }

    /// `DefaultMutateRaw`: the `__s_mutate__` hook, else (for objects) the
    /// reflected fields, with variables and DAG nodes remapped.
    fn default_copying(self, value: AnyView<'_>) -> Result<Mutated> {
        let ti = value.type_index();
        let facts = type_table::facts(ti)?;
        let hook = facts.hook(Hook::SMutate);
        if hook.type_index() != kTVMFFINone {
            return self.call_hook(hook, value).map_err(|e| attach(e, value));
        }
        if !is_object_index(ti) {
            return Ok(Mutated::Value(value.to_owned_any()?));
        }
        self.remapped(value, &facts).map_err(|e| attach(e, value))
    }

    fn remapped(self, value: AnyView<'_>, facts: &Facts) -> Result<Mutated> {
        let kind = facts.kind.unwrap_or(kTVMFFISEqHashKindUnsupported);
        let free_var = kind == kTVMFFISEqHashKindFreeVar;
        let dag = kind == kTVMFFISEqHashKindDAGNode;
        if free_var || dag {
            let known = self.remap_get(value)?;
            if known.type_index() != kTVMFFINone {
                return Ok(Mutated::from_any(known));
            }
        }
        // A variable outside a definition region is a use: unchanged.
        let region = self.head().def_region();
        if free_var && region == kTVMFFIDefRegionKindNone {
            return Ok(Mutated::Unchanged);
        }
        let out = self.mutate_fields(value, facts)?;
        if (free_var || dag)
            && (dag || region == kTVMFFIDefRegionKindPattern || !matches!(out, Mutated::Unchanged))
        {
            let out = out.into_any();
            self.remap_set(value, out.view())?;
            return Ok(Mutated::from_any(out));
        }
        Ok(out)
    }

    /// Mutates the reflected fields of `value` into a shallow copy
    /// (`MutateReflectedFieldsExpected`); unchanged if no field changed.
    /// The copy is made at the first changed field (the reference copies
    /// every node it passes and drops the copies nothing changed in).
    fn mutate_fields(self, value: AnyView<'_>, facts: &Facts) -> Result<Mutated> {
        let ti = value.type_index();
        let Some(original) = value.borrow_object() else {
            return Ok(Mutated::Unchanged);
        };
        let mut copy: Option<ObjectRef> = None;
        let walk = |copy: &mut Option<ObjectRef>| -> Result<()> {
            for f in facts.fields.iter() {
                if f.flags & i64::from(kTVMFFIFieldFlagBitMaskSEqHashIgnore) != 0 {
                    continue;
                }
                let old = get_field(&original, f)?;
                let new = match region_of_flags(f.flags) {
                    Some(kind) => self
                        .head()
                        .with_region(entering(kind), || self.mutate(old.view(), false))?,
                    None => self.mutate(old.view(), false)?,
                };
                if new.keeps(old.view()) {
                    continue;
                }
                if f.setter.is_null() {
                    // SAFETY: field names live in the type table's pool forever.
                    let name = String::from_utf8_lossy(unsafe { byte_slice(f.name) });
                    return Err(Error::type_error(format!(
                        "Cannot structurally mutate field `{name}` of type `{}` because it does not define a setter",
                        type_key_of(ti)
                    )));
                }
                let target = match copy {
                    Some(c) => c,
                    None => copy.insert(shallow_copy(value, facts)?),
                };
                let new = new.into_any();
                // SAFETY: `f` is a field of the copy's type, and the copy is
                // ours alone.
                unsafe { call_setter(f, field_addr(target, f), new.view().raw())? };
            }
            Ok(())
        };
        if facts.kind == Some(kTVMFFISEqHashKindFreeVar) {
            self.head()
                .with_region(outside_simple, || walk(&mut copy))?;
        } else {
            walk(&mut copy)?;
        }
        Ok(copy.map_or(Mutated::Unchanged, |c| Mutated::Value(Any::from(c))))
    }
}

/// A distinct copy of `value` by its type's `__ffi_shallow_copy__`.
fn shallow_copy(value: AnyView<'_>, facts: &Facts) -> Result<ObjectRef> {
    let copier = facts
        .hook(Hook::ShallowCopy)
        .to_object()
        .and_then(Function::from_object)
        .ok_or_else(|| Error::type_error("__ffi_shallow_copy__ must be an ffi.Function"))?;
    let copy = copier.call(&[value])?;
    match copy.view().to_object() {
        Some(o)
            if copy.type_index() == value.type_index()
                && value.as_object_ptr() != Some(o.as_non_null()) =>
        {
            Ok(o)
        }
        _ => Err(Error::type_error(
            "Shallow copy callback must return a distinct object with the same type as its input",
        )),
    }
}

/// The variable remap of our engines: replacements by variable identity.
#[derive(Default)]
struct Remap(Mutex<HashMap<usize, (ObjectRef, Any)>>);

impl Remap {
    fn key(var: AnyView<'_>) -> Result<ObjectRef> {
        var.to_object()
            .ok_or_else(|| Error::type_error("Variable-remap key must be an object-backed value"))
    }

    fn get(&self, var: AnyView<'_>) -> Result<Any> {
        let key = Self::key(var)?;
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map
            .get(&(key.as_ptr() as usize))
            .map_or(Any::NONE, |(_, v)| v.clone()))
    }

    fn set(&self, var: AnyView<'_>, value: AnyView<'_>) -> Result<()> {
        let key = Self::key(var)?;
        // The unchanged marker is kept as it is (a pattern definition's).
        let value = if value.type_index() == kTVMFFIUnchanged {
            Mutated::Unchanged.into_any()
        } else {
            value.to_owned_any()?
        };
        let old = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.as_ptr() as usize, (key, value));
        drop(old);
        Ok(())
    }
}

/// One of our mutators: what it does with a value the vtable hands it.
trait Engine: Sized + Send + Sync + 'static {
    /// The vtable of this engine.
    const VTABLE: MutatorVTable = MutatorVTable {
        mutate: Some(engine_mutate::<Self, false>),
        maybe_inplace_mutate: Some(engine_mutate::<Self, true>),
        var_remap_get: Some(engine_remap_get::<Self>),
        var_remap_set: Some(engine_remap_set::<Self>),
    };
    /// The traversal's name, for depth errors.
    const NAME: &'static str;
    fn remap(&self) -> &Remap;
    fn mutate(&self, m: Mutator<'_>, value: AnyView<'_>, inplace: bool) -> Result<Mutated>;
}

/// The engine behind `obj` and a view of it.
///
/// # Safety
/// `obj` is a live object made by [`new_object`] with payload `E` (the
/// vtable it was reached through is `E`'s), alive for `'a`.
unsafe fn engine<'a, E>(obj: *mut TVMFFIObject) -> Result<(&'a E, Mutator<'a>)> {
    // SAFETY: per the contract.
    unsafe { Ok((payload_of::<E>(obj), Mutator::from_raw(obj)?)) }
}

unsafe extern "C" fn engine_mutate<E: Engine, const INPLACE: bool>(
    obj: *mut TVMFFIObject,
    value: TVMFFIAny,
) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: only `E` engines carry this vtable; the caller keeps the
        // mutator and the value alive for the call.
        let (e, m) = unsafe { engine::<E>(obj)? };
        // SAFETY: the caller keeps the value alive for the call.
        let value = unsafe { AnyView::from_raw(&value) };
        level(E::NAME, || e.mutate(m, value, INPLACE)).map(Mutated::into_any)
    })
}

unsafe extern "C" fn engine_remap_get<E: Engine>(
    obj: *mut TVMFFIObject,
    var: TVMFFIAny,
) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: as in `engine_mutate`.
        let (e, _) = unsafe { engine::<E>(obj)? };
        // SAFETY: the caller keeps the value alive for the call.
        e.remap().get(unsafe { AnyView::from_raw(&var) })
    })
}

unsafe extern "C" fn engine_remap_set<E: Engine>(
    obj: *mut TVMFFIObject,
    var: TVMFFIAny,
    value: TVMFFIAny,
) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: as in `engine_mutate`.
        let (e, _) = unsafe { engine::<E>(obj)? };
        // SAFETY: the caller keeps the values alive for the call.
        let (var, value) = unsafe { (AnyView::from_raw(&var), AnyView::from_raw(&value)) };
        e.remap().set(var, value).map(|()| Any::NONE)
    })
}

/// `ffi.StructuralMap`'s mutator: `post(D(pre(x)))`.
#[repr(C)]
struct MapEngine {
    head: MutatorHead,
    remap: Remap,
    callbacks: Callbacks<2>,
    with_region: Callbacks<2>,
    preorder: bool,
}

impl MapEngine {
    /// Calls the first callback matching `value`, if any.
    fn call(&self, m: Mutator<'_>, value: AnyView<'_>) -> Option<Result<Mutated>> {
        let ti = value.type_index();
        let out = if let Some(c) = self.callbacks.find(ti) {
            c.func.call_expected(&[value])
        } else {
            let c = self.with_region.find(ti)?;
            let kind = Any::from(i64::from(m.head().def_region()));
            c.func.call_expected(&[value, kind.view()])
        };
        Some(out.map(Mutated::from_any).map_err(|e| attach(e, value)))
    }
}

impl Engine for MapEngine {
    const NAME: &'static str = "StructuralMap";
    fn remap(&self) -> &Remap {
        &self.remap
    }
    fn mutate(&self, m: Mutator<'_>, value: AnyView<'_>, inplace: bool) -> Result<Mutated> {
        if !self.preorder {
            let out = m.default_mutate(value, inplace)?;
            let mapped = match &out {
                Mutated::Unchanged => value,
                Mutated::Value(v) => v.view(),
            };
            return match self.call(m, mapped) {
                None => Ok(out),
                Some(r) => match r? {
                    Mutated::Unchanged => Ok(out),
                    replaced => Ok(replaced),
                },
            };
        }
        let Some(r) = self.call(m, value) else {
            return m.default_mutate(value, inplace);
        };
        let mapped = r?;
        let out = match &mapped {
            Mutated::Unchanged => m.default_mutate(value, inplace)?,
            Mutated::Value(v) if v.view().same_as(value) => m.default_mutate(value, inplace)?,
            Mutated::Value(v) => m.default_mutate(v.view(), inplace && unique(v.view()))?,
        };
        Ok(match out {
            Mutated::Unchanged => mapped,
            changed => changed,
        })
    }
}

/// `ffi.StructuralMutate`'s mutator: a matched callback's result is final.
#[repr(C)]
struct MutateEngine {
    head: MutatorHead,
    remap: Remap,
    callbacks: Callbacks<3>,
}

impl Engine for MutateEngine {
    const NAME: &'static str = "StructuralMutate";
    fn remap(&self) -> &Remap {
        &self.remap
    }
    fn mutate(&self, m: Mutator<'_>, value: AnyView<'_>, inplace: bool) -> Result<Mutated> {
        let Some(c) = self.callbacks.find(value.type_index()) else {
            return m.default_mutate(value, inplace);
        };
        let me = Any::from(m.to_object());
        let out = if c.flag {
            let mode = Any::from(i64::from(inplace));
            c.func.call_expected(&[value, me.view(), mode.view()])
        } else {
            c.func.call_expected(&[value, me.view()])
        };
        out.map(Mutated::from_any).map_err(|e| attach(e, value))
    }
}

// The engines begin with the head C++ code reads (after the object header).
const _: () = {
    assert!(core::mem::offset_of!(MapEngine, head) == 0);
    assert!(core::mem::offset_of!(MutateEngine, head) == 0);
};

static MAP_VTABLE: MutatorVTable = MapEngine::VTABLE;
static MUTATE_VTABLE: MutatorVTable = MutateEngine::VTABLE;

/// Runs a mutator over an owned root: in place where the root (moved in by
/// the caller) and its children are uniquely owned.
fn run(obj: ObjectRef, root: Any) -> Result<Any> {
    Mutator::of(&obj)?
        .mutate(root.view(), true)?
        .or(root.view())
}

/// `ffi.StructuralMap(root, callbacks, callbacks_with_def_region_kind, order)`.
pub fn structural_map(
    root: Any,
    callbacks: Callbacks<2>,
    with_region: Callbacks<2>,
    order: i32,
) -> Result<Any> {
    let engine = MapEngine {
        head: TraversalHead::new(&MAP_VTABLE),
        remap: Remap::default(),
        callbacks,
        with_region,
        preorder: order == 0,
    };
    run(new_object(kStructuralMutator, engine), root)
}

/// `ffi.StructuralMutate(root, callbacks)`.
pub fn structural_mutate(root: Any, callbacks: Callbacks<3>) -> Result<Any> {
    let engine = MutateEngine {
        head: TraversalHead::new(&MUTATE_VTABLE),
        remap: Remap::default(),
        callbacks,
    };
    run(new_object(kStructuralMutator, engine), root)
}

/// Runs a container hook: the mutator and the container it was called on.
fn hook(
    mutator: *mut TVMFFIObject,
    value: TVMFFIAny,
    f: impl FnOnce(Mutator<'_>, &ObjectRef) -> Result<Mutated>,
) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: the caller keeps the mutator and the value alive.
        let (m, value) = unsafe { (Mutator::from_raw(mutator)?, AnyView::from_raw(&value)) };
        let obj = container(value)?;
        f(m, &obj).map(Mutated::into_any)
    })
}

/// `__s_mutate__` of String, Bytes and BigInt: immutable leaves.
unsafe extern "C" fn mutate_leaf(_: *mut TVMFFIObject, _: TVMFFIAny) -> TVMFFIAny {
    Mutated::Unchanged.into_any().into_raw()
}

/// `__s_mutate__` of Array and List: a copy from the first changed element.
unsafe extern "C" fn mutate_seq(mutator: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    hook(mutator, value, |m, obj| {
        let t = obj.type_index();
        let items = seq::stable_elements(obj)?;
        let mut out: Option<Vec<Any>> = None;
        for (i, item) in items.views().enumerate() {
            let new = m.mutate(item, false)?;
            match &mut out {
                Some(done) => done.push(new.or(item)?),
                None if new.keeps(item) => {}
                None => {
                    let mut done = Vec::with_capacity(items.len());
                    for earlier in items.views().take(i) {
                        done.push(earlier.to_owned_any()?);
                    }
                    done.push(new.or(item)?);
                    out = Some(done);
                }
            }
        }
        Ok(match out {
            None => Mutated::Unchanged,
            Some(done) if t == kTVMFFIArray => Mutated::Value(Any::from(seq::new_array(done))),
            Some(done) => Mutated::Value(Any::from(seq::new_list(done))),
        })
    })
}

/// `__s_maybe_inplace_mutate__` of Array and List (uniquely owned): their
/// elements replaced in place.
unsafe extern "C" fn mutate_seq_in_place(
    mutator: *mut TVMFFIObject,
    value: TVMFFIAny,
) -> TVMFFIAny {
    hook(mutator, value, |m, obj| {
        let t = obj.type_index();
        let mut i = 0;
        while let Some(&raw) = seq::elements(obj, t)?.get(i) {
            // A bitwise copy: the uniquely owned container keeps the element
            // alive, and no callback can reach the container to change it.
            // SAFETY: as said.
            let item = unsafe { AnyView::from_raw(&raw) };
            let new = m.mutate(item, true)?;
            if !new.keeps(item) {
                seq::set_in_place(obj, i as i64, new.or(item)?)?;
            }
            i += 1;
        }
        Ok(Mutated::Unchanged)
    })
}

/// `__s_mutate__` of Map and Dict: a copy with the changed values (keys are
/// anchors, not mutated).
unsafe extern "C" fn mutate_map(mutator: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    hook(mutator, value, |m, obj| {
        let mut items = map::items(obj)?;
        let mut changed = false;
        for (_, v) in items.iter_mut() {
            let new = m.mutate(v.view(), false)?;
            if !new.keeps(v.view()) {
                *v = new.or(v.view())?;
                changed = true;
            }
        }
        Ok(if changed {
            Mutated::Value(Any::from(map::new_map(obj.type_index(), items)?))
        } else {
            Mutated::Unchanged
        })
    })
}

/// `__s_maybe_inplace_mutate__` of Map and Dict (uniquely owned): their
/// values replaced in place.
unsafe extern "C" fn mutate_map_in_place(
    mutator: *mut TVMFFIObject,
    value: TVMFFIAny,
) -> TVMFFIAny {
    hook(mutator, value, |m, obj| {
        let keys: Vec<Any> = map::items(obj)?.into_iter().map(|(k, _)| k).collect();
        for key in keys {
            let Some(stored) = map::get_borrowed(obj, key.view())? else {
                continue;
            };
            // A bitwise copy, as for sequences.
            let raw = *stored.raw();
            // SAFETY: the uniquely owned map keeps the value alive.
            let item = unsafe { AnyView::from_raw(&raw) };
            let new = m.mutate(item, true)?;
            if !new.keeps(item) {
                map::set(obj, key, new.or(item)?)?;
            }
        }
        Ok(Mutated::Unchanged)
    })
}

/// Registers the mutate hooks of the built-in types.
pub fn register_attrs(t: &mut Table) {
    let ptr = |f: MutateFn| Any::opaque_ptr(f as *mut c_void);
    let hooks: [(&'static str, i32, MutateFn, MutateFn); 7] = [
        ("ffi.BigInt", kTVMFFIBigInt, mutate_leaf, mutate_leaf),
        ("ffi.String", kTVMFFIStr, mutate_leaf, mutate_leaf),
        ("ffi.Bytes", kTVMFFIBytes, mutate_leaf, mutate_leaf),
        ("ffi.Array", kTVMFFIArray, mutate_seq, mutate_seq_in_place),
        ("ffi.List", kTVMFFIList, mutate_seq, mutate_seq_in_place),
        ("ffi.Map", kTVMFFIMap, mutate_map, mutate_map_in_place),
        ("ffi.Dict", kTVMFFIDict, mutate_map, mutate_map_in_place),
    ];
    for (key, index, copying, in_place) in hooks {
        TypeDef::existing(t, key, index)
            .attr("__s_mutate__", ptr(copying))
            .attr("__s_maybe_inplace_mutate__", ptr(in_place));
    }
}

/// Registers the mutate globals.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.StructuralMap",
        |root: AnyView<'_>,
         callbacks: Callbacks<2>,
         callbacks_with_def_region_kind: Callbacks<2>,
         order: i32|
         -> Any {
            structural_map(
                root.to_owned_any()?,
                callbacks,
                callbacks_with_def_region_kind,
                order,
            )
        }
    ));
    g.add(typed_fn! {
        "ffi.StructuralMutate",
        |root: AnyView<'_>, callbacks: Callbacks<3>| -> Any {
            structural_mutate(root.to_owned_any()?, callbacks)
        }
    });
    g.add(typed_fn! {
        "ffi.StructuralMutatorMutate",
        |m: Obj<'_, StructuralMutatorT>, value: View<'_>| -> Any {
            Mutator::of(&m)?.mutate(value.0, false)?.or(value.0)
        }
    });
    g.add(typed_fn!(
        "ffi.StructuralMutatorDefaultMutate",
        |m: Obj<'_, StructuralMutatorT>, value: View<'_>| -> Any {
            Mutator::of(&m)?.default_mutate(value.0, false)?.or(value.0)
        }
    ));
    g.add(typed_fn!(
        "ffi.StructuralMutatorVarRemapGet",
        |m: Obj<'_, StructuralMutatorT>, var: View<'_>| -> Any {
            Mutator::of(&m)?.remap_get(var.0)
        }
    ));
    g.add(typed_fn!(
        "ffi.StructuralMutatorVarRemapSet",
        |m: Obj<'_, StructuralMutatorT>, var: View<'_>, value: View<'_>| -> () {
            Mutator::of(&m)?.remap_set(var.0, value.0)
        }
    ));
    g.add(typed_fn!(
        "ffi.StructuralMutatorDefRegionKind",
        |m: Obj<'_, StructuralMutatorT>| -> i64 {
            Ok(i64::from(Mutator::of(&m)?.head().def_region()))
        }
    ));
    g.add(typed_fn!(
        "ffi.StructuralMutatorWithDefRegionKind",
        |m: Obj<'_, StructuralMutatorT>, kind: i32, callback: Obj<'_, FunctionT>| -> Any {
            let f = Function::from_object((*callback).clone()).expect("a Function");
            Mutator::of(&m)?
                .head()
                .with_region(entering(kind), || f.call(&[]))
        }
    ));
}
