//! Structural visitors: `ffi.StructuralWalk` (callbacks before or after the
//! children), `ffi.StructuralVisit` (a matched callback owns its value's
//! descent), the `ffi.StructuralVisitor*` methods callbacks use, and the
//! `__s_visit__` hooks of the containers.
//!
//! A visitor object has the reference's `StructuralVisitorObj` layout: after
//! the header, a vtable whose one entry visits a value, and the current
//! definition region. C++ code compiled with the official headers makes its
//! own visitors (header-only engines) and calls ours through the same vtable,
//! and its `__s_visit__` hooks receive our visitors; so everything here goes
//! through [`Visitor`], a view of any visitor by layout.
//!
//! Results cross the vtable and the hooks as one value, the reference's
//! `Expected<Optional<VisitInterrupt>>`: None to go on, a VisitInterrupt to
//! stop, or an Error. Each traversal level that fails records its node in
//! the error's [`VisitErrorContext`](crate::runtime::algo::visit_error_context).

use crate::abi::*;
use crate::runtime::algo::traversal::{entering, outside_simple, region_of_flags};
use crate::runtime::algo::visit_error_context::attach;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{
    FunctionT, Obj, ObjType, Owned, Param, Schema, View, obj_type,
};
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::boundary::catch_to_expected;
use crate::runtime::model::depth::{MAX_DEPTH, too_deep};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::lineage::is_instance;
use crate::runtime::model::object::{Cell, ObjectRef, new_object};
use crate::runtime::model::type_table::{self, Facts, Hook, Table, type_key_of};
use crate::runtime::reflect::field::get_field;
use crate::runtime::reflect::reflected::{VisitInterruptT, kStructuralVisitor};
use crate::runtime::reflect::type_def::TypeDef;
use crate::runtime::{value::map, value::seq};
use core::cell::Cell as StdCell;
use core::ffi::c_void;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicI32, Ordering};

/// The visit entry of a visitor's vtable and the ABI of native
/// `__s_visit__` hooks: `(visitor, value) -> Expected<Optional<VisitInterrupt>>`.
pub type VisitFn = unsafe extern "C" fn(*mut TVMFFIObject, TVMFFIAny) -> TVMFFIAny;

/// The reference's `StructuralVisitorVTable`.
#[repr(C)]
pub struct VisitorVTable {
    /// Visits a value.
    pub visit: Option<VisitFn>,
}

/// The fields after the header shared by the reference's
/// `StructuralVisitorObj` and `StructuralMutatorObj` (`V` is the vtable);
/// C++ engines and ours add their own state after them.
#[repr(C)]
pub struct TraversalHead<V> {
    vtable: *const V,
    /// A `TVMFFIDefRegionKind` (C++ code writes it as a plain `int32_t`).
    def_region: AtomicI32,
}

// SAFETY: the vtable is immutable (ours are statics); the region is atomic.
unsafe impl<V> Send for TraversalHead<V> {}
// SAFETY: as above.
unsafe impl<V> Sync for TraversalHead<V> {}

impl<V> TraversalHead<V> {
    /// A head for one of our engines.
    pub(crate) fn new(vtable: &'static V) -> Self {
        TraversalHead {
            vtable,
            def_region: AtomicI32::new(kTVMFFIDefRegionKindNone),
        }
    }

    /// The vtable (NULL only in a forged object).
    pub(crate) fn vtable(&self) -> Option<&V> {
        // SAFETY: a constructed traversal's vtable outlives it (the
        // reference's invariant); NULL is refused.
        unsafe { self.vtable.as_ref() }
    }

    /// The current definition region.
    pub fn def_region(&self) -> i32 {
        self.def_region.load(Ordering::Relaxed)
    }

    /// Runs `f` in the region `next` makes of the current one, restoring it
    /// afterwards (`WithDefRegionKind`).
    pub fn with_region<T>(&self, next: impl FnOnce(i32) -> i32, f: impl FnOnce() -> T) -> T {
        let saved = self.def_region();
        self.def_region.store(next(saved), Ordering::Relaxed);
        let out = f();
        self.def_region.store(saved, Ordering::Relaxed);
        out
    }
}

/// The vtable of a traversal object, which names its type.
pub trait TraversalVTable {
    /// The type key of the objects that carry it.
    const KEY: &'static str;
    /// Their type index.
    const INDEX: i32;
}

impl TraversalVTable for VisitorVTable {
    const KEY: &'static str = "ffi.StructuralVisitor";
    const INDEX: i32 = kStructuralVisitor;
}

/// A borrowed visitor or mutator object (`V` is its vtable), ours or C++'s.
pub struct Traversal<'a, V> {
    obj: NonNull<TVMFFIObject>,
    head: &'a TraversalHead<V>,
}

impl<V> Clone for Traversal<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V> Copy for Traversal<'_, V> {}

impl<'a, V: TraversalVTable> Traversal<'a, V>
where
    TraversalHead<V>: Cell,
{
    /// Views `obj` as a traversal object of this kind.
    pub fn of(obj: &'a ObjectRef) -> Result<Self> {
        // SAFETY: `obj` is live for `'a`.
        unsafe { Self::from_raw(obj.as_ptr()) }
    }

    /// Views the traversal object a hook or vtable entry was handed.
    ///
    /// # Safety
    /// `obj` is NULL or a live object for `'a`.
    pub(crate) unsafe fn from_raw(obj: *mut TVMFFIObject) -> Result<Self> {
        let bad = || Error::type_error(format!("expected an {}", V::KEY));
        let obj = NonNull::new(obj).ok_or_else(bad)?;
        // SAFETY: the caller guarantees a live object.
        let head = unsafe { crate::runtime::model::object::cell_at::<TraversalHead<V>>(obj) }
            .map_err(|_| bad())?;
        // SAFETY: the caller guarantees a live object.
        let type_index = unsafe { obj.as_ref() }.type_index;
        if type_index != V::INDEX {
            check_subclass_layout::<V>(type_index)?;
        }
        // SAFETY: the object keeps its head alive for `'a`; its only mutable
        // field is atomic.
        let head = unsafe { head.as_ref() };
        Ok(Traversal { obj, head })
    }

    /// The object's head (its vtable and definition region).
    pub fn head(self) -> &'a TraversalHead<V> {
        self.head
    }

    /// The object's handle, borrowed.
    pub(crate) fn as_ptr(self) -> *mut TVMFFIObject {
        self.obj.as_ptr()
    }

    /// A new reference to the object (to hand to callbacks).
    pub fn to_object(self) -> ObjectRef {
        // SAFETY: the object is live for `'a`.
        unsafe { ObjectRef::from_borrowed(self.obj) }
    }
}

/// Refuses a subclass whose reflected fields lie inside the head it
/// inherits: a Python dataclass deriving from a visitor or mutator places
/// its first field where the vtable is (both libraries lay it out so), and
/// calling through that would jump to its bytes. The reference crashes
/// there; ours says why.
#[cold]
fn check_subclass_layout<V: TraversalVTable>(type_index: i32) -> Result<()> {
    const HEAD_END: i64 = (size_of::<TVMFFIObject>() + size_of::<TraversalHead<()>>()) as i64;
    let facts = type_table::facts(type_index)?;
    match facts.fields.iter().find(|f| f.offset < HEAD_END) {
        None => Ok(()),
        Some(f) => Err(Error::type_error(format!(
            "`{}` lays out its field `{}` at offset {}, inside the {} it derives from (bytes \
             {}..{HEAD_END}, its vtable and definition region); it cannot run as an {}",
            type_key_of(type_index),
            // SAFETY: field names live in the type table for the process.
            String::from_utf8_lossy(unsafe { crate::runtime::model::bytes::byte_slice(f.name) }),
            f.offset,
            V::KEY,
            size_of::<TVMFFIObject>(),
            V::KEY,
        ))),
    }
}

/// The head of a visitor.
pub type VisitorHead = TraversalHead<VisitorVTable>;

// SAFETY: every object of type `ffi.StructuralVisitor` or a subclass is a (C++
// or Rust) `StructuralVisitorObj` (subclasses begin with their parent's layout),
// whose fields after the header are these; the base type has no creator,
// and a subclass made without C++ (zeroed by a generic creator) has a NULL
// vtable, which `TraversalHead::vtable` refuses.
unsafe impl Cell for VisitorHead {
    fn holds(type_index: i32) -> bool {
        is_instance(type_index, kStructuralVisitor)
    }
}

const _: () = {
    assert!(size_of::<VisitorHead>() == 16);
    assert!(core::mem::offset_of!(VisitorHead, def_region) == 8);
    assert!(size_of::<VisitorVTable>() == 8);
};

obj_type!(
    /// `ffi.StructuralVisitor`.
    StructuralVisitorT,
    Schema::object("ffi.StructuralVisitor"),
    kStructuralVisitor
);

/// A borrowed visitor object, ours or C++'s.
pub type Visitor<'a> = Traversal<'a, VisitorVTable>;

impl<'a> Visitor<'a> {
    /// Visits `value` through the visitor's vtable (`StructuralVisitorObj::Visit`).
    pub fn visit(self, value: AnyView<'_>) -> Result<Option<ObjectRef>> {
        let visit = self
            .head
            .vtable()
            .and_then(|v| v.visit)
            .ok_or_else(|| Error::type_error("the ffi.StructuralVisitor has no visit entry"))?;
        // SAFETY: the object and the value are live for the call.
        decode(unsafe { visit(self.as_ptr(), *value.raw()) })
    }

    /// The visit registered for the value's type (`__s_visit__`), or the
    /// reflected fields when none is (`DefaultVisitExpected`).
    pub fn default_visit(self, value: AnyView<'_>) -> Result<Option<ObjectRef>> {
        let ti = value.type_index();
        let facts = type_table::facts(ti)?;
        let hook = facts.hook(Hook::SVisit);
        match hook.type_index() {
            kTVMFFINone if !is_object_index(ti) => Ok(None),
            kTVMFFINone => match value.borrow_object() {
                Some(obj) => self.visit_fields(&obj, &facts),
                None => Ok(None),
            },
            _ => {
                if let Some(ptr) = hook.as_opaque_ptr().filter(|p| !p.is_null()) {
                    // SAFETY: an opaque `__s_visit__` entry is a `VisitFn`
                    // (the attribute's documented ABI).
                    let f: VisitFn = unsafe { core::mem::transmute::<*mut c_void, VisitFn>(ptr) };
                    // SAFETY: the visitor and the value are live for the call.
                    return decode(unsafe { f(self.as_ptr(), *value.raw()) });
                }
                let f = hook
                    .to_object()
                    .and_then(Function::from_object)
                    .ok_or_else(|| {
                        Error::type_error(
                            "__s_visit__ must be an opaque function pointer or ffi.Function",
                        )
                    })?;
                let me = Any::from(self.to_object());
                interrupt_result(f.call_expected(&[me.view(), value])?)
            }
        }
    }

    /// Visits the reflected fields of `obj` (`VisitReflectedFieldsExpected`):
    /// fields flagged `SEqHashIgnore` are skipped, `SEqHashDef*` fields are
    /// visited in their definition region, and a free variable's own fields
    /// outside a simple region.
    fn visit_fields(self, obj: &ObjectRef, facts: &Facts) -> Result<Option<ObjectRef>> {
        let walk = || {
            for f in facts.fields.iter() {
                if f.flags & i64::from(kTVMFFIFieldFlagBitMaskSEqHashIgnore) != 0 {
                    continue;
                }
                let v = get_field(obj, f)?;
                let out = match region_of_flags(f.flags) {
                    Some(kind) => self
                        .head
                        .with_region(entering(kind), || self.visit(v.view()))?,
                    None => self.visit(v.view())?,
                };
                if out.is_some() {
                    return Ok(out);
                }
            }
            Ok(None)
        };
        if facts.kind == Some(kTVMFFISEqHashKindFreeVar) {
            self.head.with_region(outside_simple, walk)
        } else {
            walk()
        }
    }
}

/// Decodes a hook's or vtable's result.
fn decode(raw: TVMFFIAny) -> Result<Option<ObjectRef>> {
    // SAFETY: the callee hands over an owned value.
    let v = unsafe { Any::from_raw(raw) };
    match v.type_index() {
        kTVMFFINone => Ok(None),
        kTVMFFIVisitInterrupt => Ok(v.view().to_object()),
        kTVMFFIError => Err(Error::object(v.view().to_object().expect("an Error"))),
        // The reference trusts the hook; ours names what it got.
        t => Err(Error::type_error(format!(
            "a structural visit returned `{}`; expected None, ffi.VisitInterrupt or an Error",
            type_key_of(t)
        ))),
    }
}

/// Encodes a visit result for a C caller.
fn encode(r: Result<Option<ObjectRef>>) -> Result<Any> {
    r.map(|o| o.map_or(Any::NONE, Any::from))
}

/// A callback's result as `Optional<VisitInterrupt>`.
fn interrupt_result(v: Any) -> Result<Option<ObjectRef>> {
    match v.type_index() {
        kTVMFFINone => Ok(None),
        kTVMFFIVisitInterrupt => Ok(v.view().to_object()),
        t => Err(result_mismatch("Optional<ffi.VisitInterrupt>", t)),
    }
}

/// The reference's error for a callback result of the wrong type.
pub(crate) fn result_mismatch(expected: &str, got: i32) -> Error {
    Error::type_error(format!(
        "CallExpected: result type mismatch, expected {expected}, but got {}",
        type_key_of(got)
    ))
}

thread_local! {
    /// Nesting of structural visits and mutations on this thread.
    static DEPTH: StdCell<usize> = const { StdCell::new(0) };
}

/// Runs one level of a structural traversal: on a fresh stack segment when
/// needed, and refused beyond [`MAX_DEPTH`] levels (a cyclic List, or
/// hostile nesting), where the reference overflows the stack.
pub(crate) fn level<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(too_deep(what));
    }
    /// Puts the depth back, also when `f` panics (the boundary above
    /// catches the panic, and the thread goes on).
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(self.0));
        }
    }
    DEPTH.with(|d| d.set(depth + 1));
    let _restore = Restore(depth);
    crate::runtime::model::depth::deep(f)
}

/// One `(type_index, callback[, flag])` entry of a callback table.
pub struct Callback {
    /// The type the callback takes (`-1`: any).
    pub type_index: i32,
    /// The callback.
    pub func: Function,
    /// The optional third element (StructuralMutate's `accepts_inplace_mode`).
    pub flag: bool,
}

/// An `Array<Tuple<int, ffi.Function>>` argument (`N == 2`), or
/// `Array<Tuple<int, ffi.Function, bool>>` (`N == 3`).
pub struct Callbacks<const N: usize>(pub Vec<Callback>);

impl<const N: usize> Callbacks<N> {
    /// The entries of `v`, or the first element that does not convert, as
    /// the reference describes it (`Array[index 0: Array[index 1: int]]`).
    fn parse(v: AnyView<'_>) -> core::result::Result<Vec<Callback>, String> {
        let key = |v: AnyView<'_>| type_key_of(v.type_index());
        let seq_of = |v: AnyView<'_>| {
            v.to_object()
                .filter(|o| matches!(o.type_index(), kTVMFFIArray | kTVMFFIList))
        };
        let outer = seq_of(v).ok_or_else(|| key(v))?;
        let items: Vec<Any> = seq::views(&outer, outer.type_index())
            .map_err(|_| key(v))?
            .map(|x| x.to_owned_any().unwrap_or(Any::NONE))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = |inner: String| format!("Array[index {i}: {inner}]");
            let tuple = seq_of(item.view()).ok_or_else(|| at(key(item.view())))?;
            let elems = seq::elements(&tuple, tuple.type_index()).map_err(|_| at(key(v)))?;
            if elems.len() != N {
                return Err(at(format!("Array[size={}]", elems.len())));
            }
            // SAFETY: the tuple keeps its elements alive.
            let e = |j: usize| unsafe { AnyView::from_raw(&elems[j]) };
            let field = |j: usize| at(format!("Array[index {j}: {}]", key(e(j))));
            let type_index = e(0)
                .as_i64()
                .and_then(|t| i32::try_from(t).ok())
                .ok_or_else(|| field(0))?;
            let func = e(1)
                .to_object()
                .and_then(Function::from_object)
                .ok_or_else(|| field(1))?;
            let flag = if N == 3 {
                e(2).as_i64().ok_or_else(|| field(2))? != 0
            } else {
                false
            };
            out.push(Callback {
                type_index,
                func,
                flag,
            });
        }
        Ok(out)
    }

    /// The first entry whose type `type_index` matches.
    pub fn find(&self, type_index: i32) -> Option<&Callback> {
        self.0
            .iter()
            .find(|c| type_index_match(type_index, c.type_index))
    }
}

impl<const N: usize> Param<'_> for Callbacks<N> {
    fn schema() -> Schema {
        let mut elems = vec![Schema::INT, Schema::FUNCTION];
        if N == 3 {
            elems.push(Schema::BOOL);
        }
        Schema::array_of(Schema::tuple(elems))
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        Self::parse(v).ok().map(Callbacks)
    }
    fn describe(v: AnyView<'_>) -> String {
        Self::parse(v).err().unwrap_or_default()
    }
}

/// Whether a value of `actual` matches a callback for `target`
/// (`RuntimeTypeIndexMatch`): `-1` matches all, `str`/`bytes` their small
/// forms, `ffi.Object` every object, an object type its subtypes.
pub fn type_index_match(actual: i32, target: i32) -> bool {
    match target {
        _ if actual == target => true,
        kTVMFFIAny => true,
        kTVMFFIStr => actual == kTVMFFISmallStr,
        kTVMFFIBytes => actual == kTVMFFISmallBytes,
        kTVMFFIObject => is_object_index(actual),
        _ => is_object_index(actual) && is_object_index(target) && is_instance(actual, target),
    }
}

/// What a walk callback answers (`WalkResult`).
enum Step {
    Advance,
    Skip,
    Stop(ObjectRef),
}

/// `ffi.StructuralWalk`'s visitor.
#[repr(C)]
struct Walker {
    head: VisitorHead,
    callbacks: Callbacks<2>,
    with_region: Callbacks<2>,
    preorder: bool,
}

/// `ffi.StructuralVisit`'s visitor.
#[repr(C)]
struct Dispatcher {
    head: VisitorHead,
    callbacks: Callbacks<2>,
}

// The engines begin with the head C++ code reads (after the object header).
const _: () = {
    assert!(core::mem::offset_of!(Walker, head) == 0);
    assert!(core::mem::offset_of!(Dispatcher, head) == 0);
};

static WALKER_VTABLE: VisitorVTable = VisitorVTable {
    visit: Some(walker_visit),
};
static DISPATCHER_VTABLE: VisitorVTable = VisitorVTable {
    visit: Some(dispatcher_visit),
};

/// The engine of one of our visitors and a view of it.
///
/// # Safety
/// `obj` is a live object made by [`new_object`] with payload `E` (the
/// vtable it was reached through is `E`'s), alive for `'a`.
unsafe fn engine<'a, E>(obj: *mut TVMFFIObject) -> Result<(&'a E, Visitor<'a>)> {
    // SAFETY: per the contract.
    let visitor = unsafe { Visitor::from_raw(obj)? };
    // SAFETY: per the contract.
    Ok((unsafe { payload_of::<E>(obj) }, visitor))
}

/// The payload of one of our traversal objects.
///
/// # Safety
/// `obj` is a live object made by [`new_object`] with payload `E`, alive
/// for `'a`.
pub(crate) unsafe fn payload_of<'a, E>(obj: *mut TVMFFIObject) -> &'a E {
    // SAFETY: per the contract the allocation is an `ObjBox<E>`.
    unsafe { &*(obj.cast::<crate::runtime::model::object::ObjBox<E>>()) }.payload()
}

unsafe extern "C" fn walker_visit(obj: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: only Walkers carry this vtable; the caller keeps the
        // visitor and the value alive for the call.
        let (walker, visitor) = unsafe { engine::<Walker>(obj)? };
        // SAFETY: the caller keeps the value alive for the call.
        let value = unsafe { AnyView::from_raw(&value) };
        encode(level("StructuralWalk", || walker.visit(visitor, value)))
    })
}

unsafe extern "C" fn dispatcher_visit(obj: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: only Dispatchers carry this vtable; the caller keeps the
        // visitor and the value alive for the call.
        let (dispatcher, visitor) = unsafe { engine::<Dispatcher>(obj)? };
        // SAFETY: the caller keeps the value alive for the call.
        let value = unsafe { AnyView::from_raw(&value) };
        encode(level("StructuralVisit", || {
            dispatcher.visit(visitor, value)
        }))
    })
}

impl Walker {
    fn visit(&self, v: Visitor<'_>, value: AnyView<'_>) -> Result<Option<ObjectRef>> {
        if value.type_index() == kTVMFFINone {
            return Ok(None);
        }
        if self.preorder {
            match self.step(v, value).map_err(|e| attach(e, value))? {
                Step::Stop(i) => return Ok(Some(i)),
                Step::Skip => return Ok(None),
                Step::Advance => {}
            }
        }
        if let Some(i) = v.default_visit(value).map_err(|e| attach(e, value))? {
            return Ok(Some(i));
        }
        if !self.preorder
            && let Step::Stop(i) = self.step(v, value).map_err(|e| attach(e, value))?
        {
            return Ok(Some(i));
        }
        Ok(None)
    }

    /// Calls the first matching callback.
    fn step(&self, v: Visitor<'_>, value: AnyView<'_>) -> Result<Step> {
        let ti = value.type_index();
        let out = if let Some(c) = self.callbacks.find(ti) {
            c.func.call_expected(&[value])?
        } else if let Some(c) = self.with_region.find(ti) {
            let kind = Any::from(i64::from(v.head().def_region()));
            c.func.call_expected(&[value, kind.view()])?
        } else {
            return Ok(Step::Advance);
        };
        match out.type_index() {
            kTVMFFINone => Ok(Step::Advance),
            kTVMFFIInt | kTVMFFIBool => {
                match out.view().as_i64().and_then(|t| i32::try_from(t).ok()) {
                    Some(1) => Ok(Step::Skip),
                    Some(_) => Ok(Step::Advance),
                    None => Err(result_mismatch("WalkResult", kTVMFFIInt)),
                }
            }
            kTVMFFIVisitInterrupt => Ok(Step::Stop(out.view().to_object().expect("an object"))),
            t => Err(result_mismatch("WalkResult", t)),
        }
    }
}

impl Dispatcher {
    fn visit(&self, v: Visitor<'_>, value: AnyView<'_>) -> Result<Option<ObjectRef>> {
        if value.type_index() == kTVMFFINone {
            return Ok(None);
        }
        let out = match self.callbacks.find(value.type_index()) {
            Some(c) => {
                let me = Any::from(v.to_object());
                c.func
                    .call_expected(&[value, me.view()])
                    .and_then(interrupt_result)
            }
            None => v.default_visit(value),
        };
        out.map_err(|e| attach(e, value))
    }
}

/// `ffi.StructuralWalk(root, callbacks, callbacks_with_def_region_kind, order)`.
pub fn structural_walk(
    root: AnyView<'_>,
    callbacks: Callbacks<2>,
    with_region: Callbacks<2>,
    order: i32,
) -> Result<Option<ObjectRef>> {
    let obj = new_object(
        kStructuralVisitor,
        Walker {
            head: TraversalHead::new(&WALKER_VTABLE),
            callbacks,
            with_region,
            preorder: order == 0,
        },
    );
    Visitor::of(&obj)?.visit(root)
}

/// `ffi.StructuralVisit(root, callbacks)`.
pub fn structural_visit(root: AnyView<'_>, callbacks: Callbacks<2>) -> Result<Option<ObjectRef>> {
    let obj = new_object(
        kStructuralVisitor,
        Dispatcher {
            head: TraversalHead::new(&DISPATCHER_VTABLE),
            callbacks,
        },
    );
    Visitor::of(&obj)?.visit(root)
}

/// `__s_visit__` of Array and List: their elements.
unsafe extern "C" fn visit_seq(visitor: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: the caller keeps the visitor and the value alive.
        let (v, value) = unsafe { (Visitor::from_raw(visitor)?, AnyView::from_raw(&value)) };
        let obj = container(value)?;
        for item in seq::stable_elements(&obj)?.views() {
            if let Some(i) = v.visit(item)? {
                return Ok(Any::from(i));
            }
        }
        Ok(Any::NONE)
    })
}

/// `__s_visit__` of Map and Dict: their values (keys are anchors, not
/// children).
unsafe extern "C" fn visit_map(visitor: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    catch_to_expected(|| {
        // SAFETY: the caller keeps the visitor and the value alive.
        let (v, value) = unsafe { (Visitor::from_raw(visitor)?, AnyView::from_raw(&value)) };
        let obj = container(value)?;
        for (_, item) in map::items(&obj)? {
            if let Some(i) = v.visit(item.view())? {
                return Ok(Any::from(i));
            }
        }
        Ok(Any::NONE)
    })
}

/// The container a hook was called on.
pub(crate) fn container(value: AnyView<'_>) -> Result<ObjectRef> {
    value
        .to_object()
        .ok_or_else(|| Error::type_error("a container hook was called on a non-object"))
}

/// Registers the `__s_visit__` hooks of the containers.
pub fn register_attrs(t: &mut Table) {
    let seq_hook = Any::opaque_ptr(visit_seq as *mut c_void);
    let map_hook = Any::opaque_ptr(visit_map as *mut c_void);
    for (key, index, hook) in [
        ("ffi.Array", kTVMFFIArray, &seq_hook),
        ("ffi.List", kTVMFFIList, &seq_hook),
        ("ffi.Map", kTVMFFIMap, &map_hook),
        ("ffi.Dict", kTVMFFIDict, &map_hook),
    ] {
        TypeDef::existing(t, key, index).attr("__s_visit__", hook.clone());
    }
}

/// Registers the visit globals.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.StructuralWalk",
        |root: View<'_>,
         callbacks: Callbacks<2>,
         callbacks_with_def_region_kind: Callbacks<2>,
         order: i32|
         -> Option<Owned<VisitInterruptT>> {
            Ok(
                structural_walk(root.0, callbacks, callbacks_with_def_region_kind, order)?
                    .map(Owned::new),
            )
        }
    ));
    g.add(typed_fn! {
        "ffi.StructuralVisit",
        |root: View<'_>, callbacks: Callbacks<2>| -> Option<Owned<VisitInterruptT>> {
            Ok(structural_visit(root.0, callbacks)?.map(Owned::new))
        }
    });
    g.add(typed_fn! {
        "ffi.StructuralVisitorVisit",
        |v: Obj<'_, StructuralVisitorT>, value: View<'_>| -> Option<Owned<VisitInterruptT>> {
            Ok(Visitor::of(&v)?.visit(value.0)?.map(Owned::new))
        }
    });
    g.add(typed_fn!(
        "ffi.StructuralVisitorDefaultVisit",
        |v: Obj<'_, StructuralVisitorT>, value: View<'_>| -> Option<Owned<VisitInterruptT>> {
            Ok(Visitor::of(&v)?.default_visit(value.0)?.map(Owned::new))
        }
    ));
    g.add(typed_fn!(
        "ffi.StructuralVisitorDefRegionKind",
        |v: Obj<'_, StructuralVisitorT>| -> i64 {
            Ok(i64::from(Visitor::of(&v)?.head().def_region()))
        }
    ));
    g.add(typed_fn!(
        "ffi.StructuralVisitorWithDefRegionKind",
        |v: Obj<'_, StructuralVisitorT>, kind: i32, callback: Obj<'_, FunctionT>| -> Any {
            let f = Function::from_object((*callback).clone()).expect("a Function");
            Visitor::of(&v)?
                .head()
                .with_region(entering(kind), || f.call(&[]))
        }
    ));
}
