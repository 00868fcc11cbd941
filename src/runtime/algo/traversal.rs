//! What the recursive structural traversals (equality, hashing, visitors,
//! mutators) share: state bound to the thread running the traversal (hook
//! callbacks must be `Send + Sync` closures, but only ever run on that
//! thread), the guard against cycles and depth, and the rules of
//! definition regions and structural kinds.

use crate::abi::*;
use crate::platform::address_map::AddrSet;
use crate::runtime::model::depth::{MAX_DEPTH, thread_mark, too_deep};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::type_table::type_key_of;
use core::cell::{RefCell, RefMut};
use core::hash::Hash;
use std::sync::Arc;

/// Traversal state usable only on the thread that made it.
pub(crate) struct Local<T> {
    owner: usize,
    cell: RefCell<T>,
}

// SAFETY: the cell is only reached through `get`, which checks that the
// caller runs on the owning thread; `T: Send` lets the state be dropped on
// another thread.
unsafe impl<T: Send> Send for Local<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Local<T> {}

impl<T> Local<T> {
    /// Binds `value` to the calling thread.
    pub(crate) fn new(value: T) -> Arc<Self> {
        Arc::new(Local {
            owner: thread_mark(),
            cell: RefCell::new(value),
        })
    }

    /// The state, borrowed for a moment (never across a nested traversal
    /// step or a hook). A hook callback run on another thread is a bug of
    /// the hook: it panics, and the boundary reports an `InternalError`.
    pub(crate) fn get(&self) -> RefMut<'_, T> {
        assert!(
            thread_mark() == self.owner,
            "a structural traversal's callback was called on another thread"
        );
        self.cell.borrow_mut()
    }
}

/// The objects on the current path from the root, against cycles and
/// nesting beyond [`MAX_DEPTH`].
pub(crate) struct PathGuard<K> {
    depth: usize,
    /// Objects below [`TRACK_FROM`] levels: no cycle can hide above it, so
    /// shallow trees pay no set operations.
    on_path: AddrSet<K>,
}

/// Depth from which the path's objects are remembered.
const TRACK_FROM: usize = 256;

impl<K: Hash + Eq> Default for PathGuard<K> {
    fn default() -> Self {
        PathGuard {
            depth: 0,
            on_path: AddrSet::default(),
        }
    }
}

impl<K: Hash + Eq + Copy> PathGuard<K> {
    /// Steps into `key`; `what` names the algorithm in errors. The answer
    /// is handed back to [`PathGuard::leave`].
    pub(crate) fn enter(&mut self, key: K, what: &str) -> Result<bool> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep(what));
        }
        let tracked = self.depth >= TRACK_FROM;
        if tracked && !self.on_path.insert(key) {
            let what_has = if what == "StructuralEqual" {
                "the values contain"
            } else {
                "the value contains"
            };
            return Err(Error::value(format!("{what}: {what_has} a cycle")));
        }
        self.depth += 1;
        Ok(tracked)
    }

    /// Steps back out of `key`.
    pub(crate) fn leave(&mut self, key: K, tracked: bool) {
        self.depth -= 1;
        if tracked {
            self.on_path.remove(&key);
        }
    }
}

/// Runs `f` with the definition region that `region` selects in `state`
/// changed by `next` (given the current one), restoring it afterwards. The
/// lock is not held while `f` runs.
pub(crate) fn with_region<S, T>(
    state: &Local<S>,
    region: fn(&mut S) -> &mut i32,
    next: impl FnOnce(i32) -> i32,
    f: impl FnOnce() -> T,
) -> T {
    let lock = || state.get();
    let saved = {
        let mut st = lock();
        let slot = region(&mut st);
        let saved = *slot;
        *slot = next(saved);
        saved
    };
    let out = f();
    *region(&mut lock()) = saved;
    out
}

/// Entering a definition region of `kind`: a pattern region stays one.
pub(crate) fn entering(kind: i32) -> impl FnOnce(i32) -> i32 {
    move |current| {
        if current == kTVMFFIDefRegionKindPattern {
            current
        } else {
            kind
        }
    }
}

/// The region a hook's callback asks for: `kind`, or the current one when
/// it asks for none (then entered as [`entering`] does).
pub(crate) fn hook_region(kind: i32) -> impl FnOnce(i32) -> i32 {
    move |current| {
        let kind = if kind == kTVMFFIDefRegionKindNone {
            current
        } else {
            kind
        };
        entering(kind)(current)
    }
}

/// A free variable's own fields are walked outside a simple region.
pub(crate) fn outside_simple(current: i32) -> i32 {
    if current == kTVMFFIDefRegionKindSimple {
        kTVMFFIDefRegionKindNone
    } else {
        current
    }
}

/// The structural equality/hash kind of `ti`: a TypeError for a type
/// without metadata or with an unsupported kind (the reference's messages).
/// (`kind` as `type_table::Facts` has it).
pub(crate) fn kind_of(ti: i32, kind: Option<i32>) -> Result<i32> {
    match kind {
        None => Err(Error::type_error(format!(
            "Type metadata is not set for type `{}`, so StructuralHash is not supported for this type",
            type_key_of(ti)
        ))),
        Some(kTVMFFISEqHashKindUnsupported) => Err(Error::type_error(format!(
            "_type_s_eq_hash_kind is not set for type `{}`, so StructuralHash is not supported for this type",
            type_key_of(ti)
        ))),
        Some(k) => Ok(k),
    }
}

/// The definition region a field's `SEqHashDef*` flag opens, if any.
pub(crate) fn region_of_flags(flags: i64) -> Option<i32> {
    if flags & i64::from(kTVMFFIFieldFlagBitMaskSEqHashDefSimple) != 0 {
        Some(kTVMFFIDefRegionKindSimple)
    } else if flags & i64::from(kTVMFFIFieldFlagBitMaskSEqHashDefPattern) != 0 {
        Some(kTVMFFIDefRegionKindPattern)
    } else {
        None
    }
}
