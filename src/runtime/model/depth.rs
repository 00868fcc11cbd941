//! Deep recursion without stack overflow: the recursive reflection walks
//! run each level through [`deep`], which moves to a fresh heap-allocated
//! stack segment when little of the current one is left. So a deep object
//! graph works on any thread, whatever its stack size. Calls into foreign
//! callbacks cannot move (the foreign code, an interpreter, knows its
//! stack): [`callback_may_run`] tells them when the stack is nearly used up.
#![deny(unsafe_code)]

use crate::runtime::model::error::Error;
use core::cell::Cell;

/// The deepest nesting the recursive walks follow (the reference's bound).
pub const MAX_DEPTH: usize = 1 << 20;

/// The error for the walk `what` nested beyond [`MAX_DEPTH`].
pub fn too_deep(what: &str) -> Error {
    Error::value(format!(
        "{what}: maximum recursion depth ({MAX_DEPTH}) exceeded"
    ))
}

/// Stack that must remain before a level runs on the current segment.
const RED_ZONE: usize = 128 * 1024;
/// The size of each new segment.
const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f`, on a new stack segment if the current one is nearly used up.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Stack a call into a foreign callback leaves for the callee and for
/// raising an error (at most a quarter of the thread's stack). Below
/// [`RED_ZONE`]: the walks of [`deep`] call callbacks with up to that much
/// left before they move to a new segment.
const CALLBACK_MARGIN: usize = 64 * 1024;
const _: () = assert!(CALLBACK_MARGIN < RED_ZONE);

/// An address unique to the calling thread while it lives (a thread-local
/// without a destructor, so it answers during thread exit too).
pub fn thread_mark() -> usize {
    thread_local! {
        static MARK: u8 = const { 0 };
    }
    MARK.with(|m| m as *const u8 as usize)
}

thread_local! {
    /// This thread's callback floor and the lowest address of its own
    /// stack; `usize::MAX` until computed, 0 when unknown.
    static BOUNDS: Cell<(usize, usize)> = const { Cell::new((usize::MAX, 0)) };
}

/// This thread's floor and own stack's lowest address (see [`BOUNDS`]).
fn bounds() -> (usize, usize) {
    BOUNDS.with(|b| {
        if b.get().0 == usize::MAX {
            b.set(
                crate::platform::stack::own_stack().map_or((0, 0), |(low, size)| {
                    (low + CALLBACK_MARGIN.min(size / 4), low)
                }),
            );
        }
        b.get()
    })
}

/// The lowest stack address at which the current thread may call a
/// foreign callback on its own stack: `CALLBACK_MARGIN` above the stack's
/// end, or a quarter of a small stack; 0 (no limit) when the stack is
/// unknown. Python calling Python through functions recurses through the
/// callbacks on the C stack; the reference overflows it and the process
/// dies. (Read by the x86-64 Linux call path of extern-C functions; the
/// others go through [`callback_may_run`].)
#[cfg(tvm_ffi_fast_call)]
pub fn thread_floor() -> usize {
    bounds().0
}

/// Whether a foreign callback may run at stack pointer `sp`: above the
/// thread's floor, or off its own stack, on a segment [`deep`] moved to,
/// with more than `CALLBACK_MARGIN` (64 KiB) left there.
pub fn callback_may_run(sp: usize) -> bool {
    let (floor, low) = bounds();
    sp >= floor
        || (sp < low && stacker::remaining_stack().is_none_or(|left| left > CALLBACK_MARGIN))
}

/// The current stack pointer, nearly: the address of a local.
#[inline(always)]
pub fn stack_pointer() -> usize {
    let marker = 0u8;
    core::hint::black_box(&marker) as *const u8 as usize
}
