//! Windows: the stack limits the system keeps for the thread.

/// Windows: the thread's reserved stack, guard pages included (the
/// margin keeps callbacks well above them).
pub(super) fn own_stack() -> Option<(usize, usize)> {
    use windows_sys::Win32::System::Threading::GetCurrentThreadStackLimits;
    let (mut low, mut high) = (0usize, 0usize);
    // SAFETY: two out-pointers to locals.
    unsafe { GetCurrentThreadStackLimits(&mut low, &mut high) };
    (high > low).then_some((low, high - low))
}
