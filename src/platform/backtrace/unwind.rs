//! A stack walk for raise-time backtraces that remembers how to step out of
//! each code address: the first walk through an address evaluates its call
//! frame information (`.eh_frame`, found by `_dl_find_object`); later walks
//! through it are a table lookup and two loads. `_Unwind_Backtrace`
//! evaluates the call frame information of every frame on every walk,
//! about 2,500 instructions a frame.
//!
//! Only x86-64 Linux, and only the frame shapes compilers emit for ordinary
//! code (the CFA is `rsp` or `rbp` plus an offset; the return address and
//! `rbp` are saved at offsets from it). Anything else (a signal frame, a
//! CFA expression, no `_dl_find_object` in the C library) answers None and
//! the caller walks with `_Unwind_Backtrace` instead.

use std::sync::{LazyLock, Mutex};

/// How to step out of a frame.
#[derive(Clone, Copy)]
enum Rule {
    /// CFA = (`rbp` if `cfa_rbp`, else `rsp`) + `cfa_offset`; the return
    /// address is at CFA + `ra_offset`; the caller's `rbp` at CFA +
    /// `rbp_offset`, or unchanged.
    Step {
        cfa_rbp: bool,
        cfa_offset: i64,
        ra_offset: i64,
        rbp_offset: Option<i64>,
    },
    /// The outermost frame (no return address, or no call frame
    /// information at all).
    End,
    /// A shape this walk does not evaluate.
    Unknown,
}

/// Rules found so far, by code address. Bounded like the frame names.
static RULES: LazyLock<Mutex<crate::platform::address_map::AddrMap<usize, Rule>>> =
    LazyLock::new(Default::default);
const MAX_RULES: usize = 1 << 16;

/// Forgets every rule found so far: the code they were found for may have
/// been unloaded, and another library mapped at its addresses.
pub fn forget_rules() {
    RULES.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// glibc's `struct dl_find_object` (2.35 and later).
#[repr(C)]
struct DlFindObject {
    flags: u64,
    map_start: *mut core::ffi::c_void,
    map_end: *mut core::ffi::c_void,
    link_map: *mut core::ffi::c_void,
    eh_frame: *mut core::ffi::c_void,
    reserved: [u64; 7],
}

type DlFindObjectFn = unsafe extern "C" fn(*mut core::ffi::c_void, *mut DlFindObject) -> i32;

/// `_dl_find_object`, when the C library has it (looked up unlocked:
/// `dlsym` takes the system loader's lock).
fn dl_find_object() -> Option<DlFindObjectFn> {
    static FOUND: std::sync::OnceLock<Option<DlFindObjectFn>> = std::sync::OnceLock::new();
    crate::platform::unlocked_once::get_or_make(&FOUND, || {
        // SAFETY: RTLD_DEFAULT lookup of a NUL-terminated name.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_dl_find_object".as_ptr()) };
        // SAFETY: glibc's `_dl_find_object` has this signature.
        (!f.is_null())
            .then(|| unsafe { core::mem::transmute::<*mut core::ffi::c_void, DlFindObjectFn>(f) })
    })
}

/// Evaluates the call frame information of the code at `pc`.
fn rule_for(pc: usize) -> Rule {
    use gimli::{
        BaseAddresses, CfaRule, EhFrame, EhFrameHdr, LittleEndian, Pointer, RegisterRule,
        UnwindSection, X86_64,
    };
    let Some(find) = dl_find_object() else {
        return Rule::Unknown;
    };
    // SAFETY: a zeroed record is a valid output buffer.
    let mut found: DlFindObject = unsafe { core::mem::zeroed() };
    // SAFETY: `_dl_find_object` only reads the address and fills `found`.
    if unsafe { find(pc as *mut core::ffi::c_void, &mut found) } != 0 || found.eh_frame.is_null() {
        return Rule::End;
    }
    let (hdr, end) = (found.eh_frame as usize, found.map_end as usize);
    if hdr >= end {
        return Rule::Unknown;
    }
    // SAFETY: the object's `.eh_frame_hdr` lies in its mapping, which stays
    // mapped (libraries are kept loaded); gimli reads only what the header
    // and the entries it points to describe.
    let section =
        |from: usize| unsafe { core::slice::from_raw_parts(from as *const u8, end - from) };
    let bases = BaseAddresses::default().set_eh_frame_hdr(hdr as u64);
    let Ok(parsed) = EhFrameHdr::new(section(hdr), LittleEndian).parse(&bases, 8) else {
        return Rule::Unknown;
    };
    let Pointer::Direct(frame_addr) = parsed.eh_frame_ptr() else {
        return Rule::Unknown;
    };
    let frame_addr = frame_addr as usize;
    let Some(table) = parsed.table() else {
        return Rule::Unknown;
    };
    if !(found.map_start as usize..end).contains(&frame_addr) {
        return Rule::Unknown;
    }
    let eh_frame = EhFrame::new(section(frame_addr), LittleEndian);
    let bases = bases.set_eh_frame(frame_addr as u64);
    let mut ctx = gimli::UnwindContext::new();
    let Ok(row) = table.unwind_info_for_address(
        &eh_frame,
        &bases,
        &mut ctx,
        pc as u64,
        EhFrame::cie_from_offset,
    ) else {
        return Rule::End;
    };
    let (cfa_rbp, cfa_offset) = match *row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } if register == X86_64::RSP => {
            (false, offset)
        }
        CfaRule::RegisterAndOffset { register, offset } if register == X86_64::RBP => {
            (true, offset)
        }
        _ => return Rule::Unknown,
    };
    let ra_offset = match row.register(X86_64::RA) {
        RegisterRule::Offset(o) => o,
        RegisterRule::Undefined => return Rule::End,
        _ => return Rule::Unknown,
    };
    let rbp_offset = match row.register(X86_64::RBP) {
        RegisterRule::Offset(o) => Some(o),
        RegisterRule::Undefined | RegisterRule::SameValue => None,
        _ => return Rule::Unknown,
    };
    Rule::Step {
        cfa_rbp,
        cfa_offset,
        ra_offset,
        rbp_offset,
    }
}

/// The largest frame a step may cross: a rule giving a larger one is taken
/// for a misreading and ends the walk.
const MAX_FRAME: usize = 1 << 24;

/// Writes the return addresses of the calling stack into `out`, newest
/// first, and answers how many; None when a frame has a shape this walk
/// does not evaluate (the caller then uses `_Unwind_Backtrace`).
#[inline(never)]
pub fn return_addresses(out: &mut [usize]) -> Option<usize> {
    let (mut pc, mut rsp, mut rbp): (usize, usize, usize);
    // SAFETY: reads the current instruction, stack and frame pointers.
    unsafe {
        core::arch::asm!(
            "lea {pc}, [rip]",
            "mov {sp}, rsp",
            "mov {bp}, rbp",
            pc = out(reg) pc,
            sp = out(reg) rsp,
            bp = out(reg) rbp,
            options(nomem, nostack, preserves_flags),
        );
    }
    let mut rules = RULES.lock().unwrap_or_else(|e| e.into_inner());
    if rules.len() + out.len() > MAX_RULES {
        rules.clear();
    }
    let mut n = 0;
    // The first `pc` is this function's own; every later one is a return
    // address, whose call instruction lies one byte before it.
    let mut lookup = pc;
    while n < out.len() {
        let rule = *rules.entry(lookup).or_insert_with(|| rule_for(lookup));
        let Rule::Step {
            cfa_rbp,
            cfa_offset,
            ra_offset,
            rbp_offset,
        } = rule
        else {
            return matches!(rule, Rule::End).then_some(n);
        };
        let cfa = (if cfa_rbp { rbp } else { rsp }).wrapping_add_signed(cfa_offset as isize);
        // The stack only grows down: a caller's frame lies above its callee's.
        if cfa <= rsp || cfa - rsp > MAX_FRAME || cfa % 8 != 0 {
            return Some(n);
        }
        let at = |offset: i64| cfa.wrapping_add_signed(offset as isize) as *const usize;
        // SAFETY: the call frame information of the code at `pc` places the
        // return address (and the saved `rbp`) at these offsets from the
        // CFA, inside the live frames of this thread's stack, which lie
        // above this function's own.
        let (ra, next_rbp) = unsafe {
            (
                at(ra_offset).read(),
                rbp_offset.map_or(rbp, |o| at(o).read()),
            )
        };
        if ra == 0 {
            return Some(n);
        }
        out[n] = ra;
        n += 1;
        (pc, rsp, rbp) = (ra, cfa, next_rbp);
        lookup = pc - 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn nested(depth: usize, f: &mut dyn FnMut()) {
        if depth == 0 {
            f()
        } else {
            nested(depth - 1, f);
            core::hint::black_box(depth);
        }
    }

    #[test]
    fn same_frames_as_unwind_backtrace() {
        let mut check = || {
            let mut ours = [0usize; 256];
            let n = return_addresses(&mut ours).expect("ordinary frames are walkable");
            let mut theirs = Vec::new();
            backtrace::trace(|f| {
                theirs.push(f.ip() as usize);
                true
            });
            // Both begin inside their own machinery; from the caller of
            // this closure on, the frames are the same.
            assert!(n > 8, "{n} frames");
            let tail = &ours[1..n];
            assert!(
                theirs.ends_with(tail) || theirs[..theirs.len() - 1].ends_with(tail),
                "ours {:x?}\ntheirs {:x?}",
                tail,
                theirs
            );
        };
        nested(5, &mut check);
        // Again, from the remembered rules.
        nested(5, &mut check);
    }
}
