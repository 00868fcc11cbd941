//! Type ancestry without the type table's lock: for each registered type
//! index, the indices of its ancestors, root first. The type table publishes
//! a type here when it registers it; the records are immutable afterwards
//! and live for the process, so readers need no lock.
//!
//! This is the reference's `IsObjectInstance`: a type check accepts a
//! registered subclass of the type it expects. The exact match costs one
//! compare; anything else is a walk over at most a few ancestors.

use core::sync::atomic::{AtomicPtr, Ordering};

/// Type indices per chunk of the lookup table.
const CHUNK: usize = 1024;
/// Chunks: type indices below `CHUNK * CHUNKS` (2^20) are published.
const CHUNKS: usize = 1024;
/// One past the largest type index the table can hold; the type table
/// refuses to allocate indices at or beyond it.
pub const MAX_TYPE_INDEX: i32 = (CHUNK * CHUNKS) as i32;

/// The ancestors of one type, root first (`type_ancestors` as indices).
type Record = Box<[i32]>;
type Chunk = [AtomicPtr<Record>; CHUNK];

static TABLE: [AtomicPtr<Chunk>; CHUNKS] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; CHUNKS];

/// Records the ancestors of `type_index` (root first). Called by the type
/// table, under its lock, once per type: publishing never races another
/// publisher. An index out of range is ignored (the table refuses those).
pub fn publish(type_index: i32, ancestors: &[i32]) {
    let Ok(i) = usize::try_from(type_index) else {
        return;
    };
    let Some(slot) = TABLE.get(i / CHUNK) else {
        return;
    };
    let mut chunk = slot.load(Ordering::Acquire);
    if chunk.is_null() {
        let fresh: Box<Chunk> = Box::new([const { AtomicPtr::new(core::ptr::null_mut()) }; CHUNK]);
        chunk = Box::into_raw(fresh);
        // Publishers hold the type table's lock, so nobody else stores here.
        slot.store(chunk, Ordering::Release);
    }
    let record: Box<Record> = Box::new(ancestors.into());
    // SAFETY: chunks are never freed once stored.
    let entry = unsafe { &(*chunk)[i % CHUNK] };
    // A type is registered once; a record already there stays (and the new
    // one is dropped) so readers never see a freed record.
    if entry.load(Ordering::Acquire).is_null() {
        entry.store(Box::into_raw(record), Ordering::Release);
    }
}

/// The ancestors of `type_index`, root first, if it is registered.
fn ancestors(type_index: i32) -> Option<&'static [i32]> {
    let i = usize::try_from(type_index).ok()?;
    let chunk = TABLE.get(i / CHUNK)?.load(Ordering::Acquire);
    if chunk.is_null() {
        return None;
    }
    // SAFETY: chunks and records are never freed or changed once stored.
    let record = unsafe { (*chunk)[i % CHUNK].load(Ordering::Acquire).as_ref() }?;
    Some(record)
}

/// Whether `type_index` is `base` or a registered subclass of it. The
/// exact match is one compare; as in the reference, a child's index is
/// above its parent's, so an index below `base` is refused at once.
#[inline]
pub fn is_instance(type_index: i32, base: i32) -> bool {
    type_index == base || (type_index > base && derives(type_index, base))
}

/// The ancestry walk of [`is_instance`], out of line.
#[inline(never)]
fn derives(type_index: i32, base: i32) -> bool {
    ancestors(type_index).is_some_and(|a| a.contains(&base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestry() {
        // Indices no built-in uses, in a chunk of their own.
        publish(900_000, &[64]);
        publish(900_001, &[64, 900_000]);
        assert!(is_instance(900_001, 900_000));
        assert!(is_instance(900_001, 64));
        assert!(is_instance(900_000, 900_000));
        assert!(!is_instance(900_000, 900_001));
        assert!(!is_instance(900_002, 900_000)); // unregistered
        assert!(!is_instance(-1, 64));
        assert!(!is_instance(MAX_TYPE_INDEX + 5, 64));
        publish(MAX_TYPE_INDEX, &[64]); // ignored, no panic
    }
}
