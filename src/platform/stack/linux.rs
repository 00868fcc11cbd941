//! Linux: the stack glibc reports for the thread, and the kernel's `AT_RANDOM` bytes.

use core::cell::Cell;

/// The lowest address and the size of the current thread's own stack (not
/// a segment a walk moved to).
pub(super) fn own_stack() -> Option<(usize, usize)> {
    // SAFETY: the attribute object is initialised by pthread_getattr_np
    // before it is read, and destroyed once; the out-pointers are locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let (mut addr, mut size) = (core::ptr::null_mut(), 0usize);
        let found = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        found.then_some((addr as usize, size))
    }
}

/// Whether the current thread runs on the process's initial stack (the
/// main thread's, which the kernel put above every other mapping): its own
/// stack holds the random bytes the kernel placed there at exec
/// (`AT_RANDOM`). After a `fork` from another thread, the child's only
/// thread runs on that thread's stack instead, and answers false.
///
/// The answer is kept per thread: finding the main thread's stack reads
/// `/proc/self/maps`, which a caller on the main thread must not pay per
/// call. And the random bytes lie above the top glibc reports for the main
/// thread (the page above `__libc_stack_end`) by the size of the arguments
/// and environment the kernel put there, which the kernel caps at a
/// quarter of the stack limit: that much above the top still counts (a
/// large environment made every answer false before, and every call of a
/// C-created function on the main thread read `/proc/self/maps`).
#[cfg_attr(
    not(target_arch = "x86_64"),
    expect(dead_code, reason = "read by the x86-64 call path only")
)]
pub(super) fn on_initial_stack() -> bool {
    thread_local! {
        static ON_INITIAL: Cell<Option<bool>> = const { Cell::new(None) };
    }
    ON_INITIAL.with(|known| {
        if let Some(answer) = known.get() {
            return answer;
        }
        // SAFETY: getauxval only reads the auxiliary vector.
        let at_random = unsafe { libc::getauxval(libc::AT_RANDOM) } as usize;
        let answer = own_stack().is_some_and(|(low, size)| {
            at_random >= low && at_random - low < size.saturating_add(size / 4 + 4096)
        });
        known.set(Some(answer));
        answer
    })
}
