//! `ffi.VisitErrorContext`: where in a tree a structural visit or mutation
//! failed. Each level of a failing traversal records its node in the error's
//! extra context (innermost first), and `ffi.VisitErrorContext.FindAccessPaths`
//! turns that record back into access paths from a root, with the
//! reference's semantics.

use crate::abi::*;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{ArrayRet, Obj, ObjType, ObjectT, Owned, Schema, obj_type};
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::bytes::byte_slice;
use crate::runtime::model::depth::MAX_DEPTH;
use crate::runtime::model::error::{Error, ErrorRepr, Result};
use crate::runtime::model::object::{ObjectRef, new_object};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::model::type_table::facts;
use crate::runtime::reflect::field::get_field;
use crate::runtime::reflect::reflected::{
    AccessPathT, VisitErrorContextObj, extend_path, kVisitErrorContext, new_step, root_path,
};
use crate::runtime::{value::map, value::seq};
use std::collections::HashSet;

/// `AccessKind` values of the steps a found path records.
const ATTR: i32 = 0;
const ARRAY_ITEM: i32 = 1;
const MAP_ITEM: i32 = 2;

obj_type!(
    /// `ffi.VisitErrorContext`.
    VisitErrorContextT,
    Schema::object("ffi.VisitErrorContext"),
    exact kVisitErrorContext
);

/// Records `node` in the visit context of `err`, as the reference's
/// `UpdateVisitErrorContext`: appended to the error's VisitErrorContext, or
/// in a new one that keeps the previous extra context. Values that are not
/// objects are not recorded.
#[cold]
pub fn attach(err: Error, node: AnyView<'_>) -> Error {
    if !is_object_index(node.type_index()) || matches!(err.repr(), ErrorRepr::EnvAlreadySet) {
        return err;
    }
    let Some(node) = node.to_object() else {
        return err;
    };
    let obj = err.into_object();
    let Some(cell) = obj.cell_ptr::<TVMFFIErrorCell>() else {
        return Error::object(obj);
    };
    // SAFETY: the cell belongs to the live error `obj`. The error is in
    // flight on this failing traversal, which alone owns it (the reference
    // updates it in place under the same rule, see `TVMFFIErrorCell`).
    let slot = unsafe { &mut (*cell.as_ptr()).extra_context };
    if let Some(ctx) = core::ptr::NonNull::new(slot.cast::<TVMFFIObject>()) {
        // SAFETY: a non-NULL extra context is a live object owned by the error.
        let ctx = core::mem::ManuallyDrop::new(unsafe { ObjectRef::from_raw(ctx) });
        if ctx.type_index() == kVisitErrorContext {
            // SAFETY: VisitErrorContext objects (ours or C++) have this layout.
            let list = unsafe { ctx.payload::<VisitErrorContextObj>() }
                .reverse_visit_pattern
                .clone();
            if let Some(list) = list
                && let Ok(mut edit) = seq::ListMut::new(&list)
            {
                let n = seq::elements(&list, kTVMFFIList).map_or(0, |e| e.len());
                if edit.insert(n as i64, vec![Any::from(node)]).is_ok() {
                    return Error::object(obj);
                }
            }
            return Error::object(obj);
        }
    }
    // SAFETY: the old context's reference moves into the new context.
    let prev = core::ptr::NonNull::new(slot.cast::<TVMFFIObject>())
        .map(|p| unsafe { ObjectRef::from_raw(p) });
    let ctx = new_object(
        kVisitErrorContext,
        VisitErrorContextObj {
            reverse_visit_pattern: Some(seq::new_list(vec![Any::from(node)])),
            prev_error_context: prev,
        },
    );
    *slot = ctx.into_raw_ptr().cast();
    Error::object(obj)
}

/// Finds the access paths from a root to the failing node a
/// VisitErrorContext recorded (`VisitErrorAccessPathFinder`).
struct Finder {
    /// The recorded objects, innermost first, repeats merged.
    records: Vec<ObjectRef>,
    allow_prefix_match: bool,
    /// How many records (outermost first) the current path has matched.
    matched: usize,
    /// The steps of the current path.
    steps: Vec<(i32, Any)>,
    /// Paths already made for prefixes of `steps`.
    made: Vec<ObjectRef>,
    results: Vec<ObjectRef>,
    /// Objects on the current path: a cycle is not walked again. (The
    /// reference recurses until the stack overflows.)
    on_path: HashSet<usize>,
}

impl Finder {
    fn new(ctx: &ObjectRef, allow_prefix_match: bool) -> Finder {
        // SAFETY: VisitErrorContext objects (ours or C++) have this layout.
        let list = unsafe { ctx.payload::<VisitErrorContextObj>() }
            .reverse_visit_pattern
            .clone();
        let mut records: Vec<ObjectRef> = Vec::new();
        if let Some(list) = list {
            for v in seq::views(&list, kTVMFFIList).into_iter().flatten() {
                if let Some(o) = v.to_object()
                    && records.last() != Some(&o)
                {
                    records.push(o);
                }
            }
        }
        Finder {
            records,
            allow_prefix_match,
            matched: 0,
            steps: Vec::new(),
            made: Vec::new(),
            results: Vec::new(),
            on_path: HashSet::new(),
        }
    }

    fn path(&mut self) -> ObjectRef {
        for i in self.made.len()..self.steps.len() {
            let parent = if i == 0 {
                root_path()
            } else {
                self.made[i - 1].clone()
            };
            let (kind, key) = self.steps[i].clone();
            self.made.push(extend_path(&parent, new_step(kind, key)));
        }
        self.made.last().cloned().unwrap_or_else(root_path)
    }

    fn with_step(&mut self, kind: i32, key: Any, value: AnyView<'_>) -> Result<()> {
        self.steps.push((kind, key));
        let out = self.value(value);
        self.steps.pop();
        self.made.truncate(self.steps.len());
        out
    }

    fn value(&mut self, value: AnyView<'_>) -> Result<()> {
        let Some(obj) = value.to_object() else {
            return Ok(());
        };
        if self.on_path.len() >= MAX_DEPTH || !self.on_path.insert(obj.as_ptr() as usize) {
            return Ok(());
        }
        let out = crate::runtime::model::depth::deep(|| match obj.type_index() {
            t @ (kTVMFFIArray | kTVMFFIList) => {
                let items: Vec<Any> = seq::views(&obj, t)?
                    .map(|v| v.to_owned_any())
                    .collect::<Result<_>>()?;
                for (i, item) in items.iter().enumerate() {
                    if item.type_index() != kTVMFFINone {
                        self.with_step(ARRAY_ITEM, Any::from(i as i64), item.view())?;
                    }
                }
                Ok(())
            }
            kTVMFFIMap | kTVMFFIDict => {
                for (k, v) in map::items(&obj)? {
                    if k.type_index() != kTVMFFINone && v.type_index() != kTVMFFINone {
                        self.with_step(MAP_ITEM, k, v.view())?;
                    }
                }
                Ok(())
            }
            _ => self.object(&obj),
        });
        self.on_path.remove(&(obj.as_ptr() as usize));
        out
    }

    fn object(&mut self, obj: &ObjectRef) -> Result<()> {
        let ti = obj.type_index();
        let Some(facts) = facts(ti).ok().filter(|f| f.kind.is_some()) else {
            return Ok(());
        };
        let n = self.records.len();
        let matched_step = self.matched < n && *obj == self.records[n - 1 - self.matched];
        if matched_step {
            self.matched += 1;
            if self.matched == n {
                let p = self.path();
                self.results.push(p);
                self.matched -= 1;
                return Ok(());
            }
        }
        let before = self.results.len();
        for f in facts.fields.iter() {
            let child = get_field(obj, f)?;
            // SAFETY: field names live in the type table's pool forever.
            let name = make_text(unsafe { byte_slice(f.name) }, TextKind::Str);
            self.with_step(ATTR, name, child.view())?;
        }
        if self.allow_prefix_match
            && self.matched > 0
            && self.matched < n
            && !self.steps.is_empty()
            && self.results.len() == before
        {
            let p = self.path();
            self.results.push(p);
        }
        if matched_step {
            self.matched -= 1;
        }
        Ok(())
    }
}

/// `VisitErrorContext::FindAccessPaths`: the paths from `root` along which
/// the recorded nodes occur, outermost record first.
pub fn find_access_paths(
    root: &ObjectRef,
    ctx: &ObjectRef,
    allow_prefix_match: bool,
) -> Result<Vec<ObjectRef>> {
    let mut finder = Finder::new(ctx, allow_prefix_match);
    finder.on_path.insert(root.as_ptr() as usize);
    finder.object(root)?;
    Ok(finder.results)
}

/// Registers `ffi.VisitErrorContext.FindAccessPaths`.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!(
        "ffi.VisitErrorContext.FindAccessPaths",
        |root: Obj<'_, ObjectT>,
         ctx: Obj<'_, VisitErrorContextT>,
         allow_prefix_match: bool|
         -> ArrayRet<Owned<AccessPathT>> {
            let paths = find_access_paths(&root, &ctx, allow_prefix_match)?;
            Ok(ArrayRet::new(seq::new_array(
                paths.into_iter().map(Any::from).collect(),
            )))
        }
    ));
}
