//! Deep recursion without stack overflow: the recursive reflection walks
//! run each level through [`deep`], which moves to a fresh heap-allocated
//! stack segment when little of the current one is left. So a deep object
//! graph works on any thread, whatever its stack size. Calls into foreign
//! callbacks cannot move (the foreign code, an interpreter, knows its
//! stack): [`has_room`] tells them when the stack is nearly used up.
#![forbid(unsafe_code)]

use core::cell::Cell;

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
/// raising an error (at most a quarter of the thread's stack).
const CALLBACK_MARGIN: usize = 256 * 1024;

/// The lowest stack address at which the current thread may still call a
/// foreign callback, computed at its first callback (`sp` is the stack
/// pointer then): [`CALLBACK_MARGIN`] above the stack's end, or a quarter
/// of what remains on a small stack; 0 (no limit) when the stack's end is
/// unknown. Python calling Python through functions recurses through the
/// callbacks on the C stack; the reference overflows it and the process
/// dies.
fn callback_floor(sp: usize) -> usize {
    // What remains at the first call is most of the stack.
    stacker::remaining_stack().map_or(0, |remaining| {
        sp.saturating_sub(remaining) + CALLBACK_MARGIN.min(remaining / 4)
    })
}

thread_local! {
    /// [`callback_floor`] of this thread; `usize::MAX` until computed.
    static FLOOR: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's callback floor (see [`callback_floor`]), computed once;
/// `sp` is the current stack pointer.
pub fn thread_floor(sp: usize) -> usize {
    FLOOR.with(|f| {
        if f.get() == usize::MAX {
            f.set(callback_floor(sp));
        }
        f.get()
    })
}

/// The current stack pointer, nearly: the address of a local.
#[inline(always)]
pub fn stack_pointer() -> usize {
    let marker = 0u8;
    core::hint::black_box(&marker) as *const u8 as usize
}

/// Whether the current thread's stack has room for a call into a foreign
/// callback (above [`thread_floor`]).
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[inline(always)]
pub fn has_room() -> bool {
    let sp = stack_pointer();
    sp >= thread_floor(sp)
}
