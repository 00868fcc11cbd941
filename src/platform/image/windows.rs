//! Loaded PE images, as the memory manager describes their pages
//! (`VirtualQuery`): each section is mapped as pages of one protection, and
//! every page of an image shares its allocation base, the module handle.

use super::symbol::AddressSymbol;
use core::ffi::c_void;
use core::ops::Range;
use windows_sys::Win32::Foundation::HMODULE;
use windows_sys::Win32::System::LibraryLoader::{
    GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
    GetModuleFileNameW, GetModuleHandleExW,
};
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

/// The module (DLL or executable) whose code or data holds `addr`.
fn module_at(addr: usize) -> Option<HMODULE> {
    let mut module = core::ptr::null_mut();
    let flags =
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT;
    // SAFETY: with FROM_ADDRESS the "name" is an address inside a loaded
    // module; the handle is written to `module` and not counted.
    let found = unsafe { GetModuleHandleExW(flags, addr as *const u16, &mut module) };
    (found != 0).then_some(module)
}

/// The file name of a loaded module, as UTF-16.
fn module_file(module: HMODULE) -> Option<Vec<u16>> {
    let mut name = vec![0u16; 32768];
    // SAFETY: a live module and a buffer of the length given.
    let n = unsafe { GetModuleFileNameW(module, name.as_mut_ptr(), name.len() as u32) } as usize;
    name.truncate(n);
    (n > 0).then_some(name)
}

/// The file of the loaded module (DLL or executable) whose code or data
/// holds `addr`.
pub fn path_of_address(addr: usize) -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    let name = module_file(module_at(addr)?)?;
    Some(std::path::PathBuf::from(std::ffi::OsString::from_wide(
        &name,
    )))
}

/// `dladdr` on Windows: the module holding `addr` (its file name, UTF-8,
/// and its base) and the nearest export at or below it, the counterpart of
/// the dynamic symbol table (a function no export covers shows as the
/// export before it, as with `dladdr`).
pub fn symbol_at(addr: usize) -> Option<AddressSymbol> {
    let module = module_at(addr)?;
    let file = module_file(module).map(|n| String::from_utf16_lossy(&n).into_bytes());
    // SAFETY: `module` is a loaded image (the loader just named it), whose
    // headers and export directory are mapped.
    let symbol = unsafe { nearest_export(module as usize, addr) };
    Some(AddressSymbol {
        file,
        base: module as usize,
        symbol,
    })
}

/// No process-wide symbol lookup on Windows.
pub fn process_symbol(_name: &core::ffi::CStr) -> Option<*mut c_void> {
    None
}

/// The end of the image whose base is `base`: SizeOfImage in its PE32+
/// optional header.
pub fn object_end(base: usize) -> Option<usize> {
    module_file(base as HMODULE)?;
    // SAFETY: `base` is a loaded module (its file name was just found),
    // whose headers are mapped.
    unsafe {
        let read = |offset: usize| ((base + offset) as *const u32).read_unaligned() as usize;
        Some(base + read(read(0x3c) + 24 + 56))
    }
}

/// The export of the PE image at `base` with the highest address at or
/// below `addr`: its name. The export table is
/// the library's own bytes, never checked by the loader: every offset in
/// it is bounded by the image's size, and a name must end within it.
///
/// # Safety
/// `base` is the base of a loaded PE32+ image (the loader mapped it by its
/// headers, so those are sound).
unsafe fn nearest_export(base: usize, addr: usize) -> Option<Vec<u8>> {
    // The headers, which the loader mapped the image by (unaligned reads:
    // no layout is assumed).
    let header_u32 = |offset: usize| {
        // SAFETY: an offset into the loaded image's headers, per the contract.
        unsafe { ((base + offset) as *const u32).read_unaligned() as usize }
    };
    let nt = header_u32(0x3c);
    // The optional header follows the signature (4) and file header (20):
    // SizeOfImage at 56 in it, the export directory entry at 112 (PE32+).
    let size = header_u32(nt + 24 + 56);
    let (dir, dir_size) = (header_u32(nt + 24 + 112), header_u32(nt + 24 + 116));
    // Reads within the image only.
    let read = |offset: usize, width: usize| -> Option<usize> {
        (offset.checked_add(width)? <= size).then(|| {
            // SAFETY: `offset..offset + width` lies in the mapped image.
            unsafe {
                let at = base + offset;
                if width == 2 {
                    (at as *const u16).read_unaligned() as usize
                } else {
                    (at as *const u32).read_unaligned() as usize
                }
            }
        })
    };
    if dir == 0 || dir_size == 0 {
        return None;
    }
    let (functions, names) = (read(dir + 20, 4)?, read(dir + 24, 4)?);
    let (functions_at, names_at, ordinals_at) =
        (read(dir + 28, 4)?, read(dir + 32, 4)?, read(dir + 36, 4)?);
    let target = addr.checked_sub(base)?;
    let mut best: Option<(usize, usize)> = None;
    for i in 0..names.min(size / 4) {
        let Some(ordinal) = read(ordinals_at + 2 * i, 2).filter(|&o| o < functions) else {
            continue;
        };
        let (Some(rva), Some(name)) = (
            read(functions_at + 4 * ordinal, 4),
            read(names_at + 4 * i, 4),
        ) else {
            continue;
        };
        // A forwarder's "address" lies in the export directory: no code.
        let forwarder = (dir..dir.saturating_add(dir_size)).contains(&rva);
        if !forwarder && rva <= target && best.is_none_or(|(b, _)| rva > b) {
            best = Some((rva, name));
        }
    }
    let (_, name) = best?;
    // SAFETY: `name..size` lies in the mapped image.
    let rest =
        unsafe { core::slice::from_raw_parts((base + name) as *const u8, size.checked_sub(name)?) };
    Some(rest[..rest.iter().position(|&b| b == 0)?].to_vec())
}

/// Not walked on Windows: `None` (debug information is not read here).
pub fn object_holding(_addr: usize) -> Option<(usize, Vec<Range<usize>>, std::path::PathBuf)> {
    None
}

/// The loader keeps no counts to read on Windows: `None`.
pub fn loader_counts() -> Option<(u64, u64)> {
    None
}
