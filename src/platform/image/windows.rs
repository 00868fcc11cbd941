//! Loaded PE images, as the memory manager describes their pages
//! (`VirtualQuery`): each section is mapped as pages of one protection, and
//! every page of an image shares its allocation base, the module handle.

use core::ffi::c_void;
use core::ops::Range;
use windows_sys::Win32::System::Memory::{
    MEM_COMMIT, MEM_IMAGE, MEMORY_BASIC_INFORMATION, PAGE_EXECUTE_READ, PAGE_EXECUTE_READWRITE,
    PAGE_EXECUTE_WRITECOPY, PAGE_READONLY, PAGE_READWRITE, PAGE_WRITECOPY, VirtualQuery,
};

/// The region of pages of one state and protection holding `addr`.
fn region(addr: usize) -> Option<MEMORY_BASIC_INFORMATION> {
    // SAFETY: an all-zero record is a valid value to be filled in.
    let mut info: MEMORY_BASIC_INFORMATION = unsafe { core::mem::zeroed() };
    // SAFETY: VirtualQuery reads no memory at `addr`; it fills `info`.
    let n = unsafe { VirtualQuery(addr as *const c_void, &mut info, size_of_val(&info)) };
    (n != 0).then_some(info)
}

const READABLE: u32 = PAGE_READONLY
    | PAGE_READWRITE
    | PAGE_WRITECOPY
    | PAGE_EXECUTE_READ
    | PAGE_EXECUTE_READWRITE
    | PAGE_EXECUTE_WRITECOPY;
const WRITABLE: u32 =
    PAGE_READWRITE | PAGE_WRITECOPY | PAGE_EXECUTE_READWRITE | PAGE_EXECUTE_WRITECOPY;

/// How many bytes from `addr` lie within committed image pages of the
/// same module that are readable (with `need_write`, writable);
/// `None` if `addr` is not in such a page.
pub fn mapped_extent(addr: *const c_void, need_write: bool) -> Option<usize> {
    let wanted = if need_write { WRITABLE } else { READABLE };
    let usable = |r: &MEMORY_BASIC_INFORMATION, base: *mut c_void| {
        r.State == MEM_COMMIT
            && r.Type == MEM_IMAGE
            && r.AllocationBase == base
            && r.Protect & wanted != 0
    };
    let first = region(addr as usize)?;
    let base = first.AllocationBase;
    if !usable(&first, base) {
        return None;
    }
    let mut end = (first.BaseAddress as usize).checked_add(first.RegionSize)?;
    while let Some(next) = region(end).filter(|r| usable(r, base)) {
        end = end.checked_add(next.RegionSize)?;
    }
    Some(end - addr as usize)
}

/// The address ranges of the image whose module handle (its base) is
/// `handle`: its runs of committed pages.
pub fn segments_of(handle: *mut c_void) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut at = handle as usize;
    while let Some(r) = region(at).filter(|r| r.AllocationBase == handle) {
        let Some(end) = at.checked_add(r.RegionSize) else {
            break;
        };
        match out.last_mut() {
            Some(last) if last.end == at => last.end = end,
            _ => out.push(at..end),
        }
        at = end;
    }
    out
}
