//! Deep recursion without stack overflow: the recursive reflection walks
//! run each level through [`deep`], which moves to a fresh heap-allocated
//! stack segment when little of the current one is left. So a deep object
//! graph works on any thread, whatever its stack size.
#![forbid(unsafe_code)]

/// Stack that must remain before a level runs on the current segment.
const RED_ZONE: usize = 128 * 1024;
/// The size of each new segment.
const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f`, on a new stack segment if the current one is nearly used up.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
