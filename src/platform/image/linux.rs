//! The loaded objects, as the Linux dynamic loader lists them
//! (`dl_iterate_phdr`, `dlinfo`).

use super::symbol::DataObject;
use core::ffi::{c_int, c_void};
use core::ops::Range;
use object::elf;
use std::path::Path;

#[cfg(target_pointer_width = "64")]
type ProgramHeader = libc::Elf64_Phdr;
#[cfg(target_pointer_width = "32")]
type ProgramHeader = libc::Elf32_Phdr;

/// One object the dynamic loader has mapped, as `dl_iterate_phdr`
/// reports it.
struct Object<'a> {
    base: usize,
    name: *const libc::c_char,
    /// Its program headers (none when the loader gives no table).
    headers: &'a [ProgramHeader],
}

impl Object<'_> {
    /// The address ranges of its loadable segments whose flags include
    /// `flags` (`PF_R`, `PF_W`), in header order.
    fn segments(&self, flags: u32) -> impl Iterator<Item = Range<usize>> + '_ {
        self.headers
            .iter()
            .filter(move |ph| ph.p_type == libc::PT_LOAD && ph.p_flags & flags == flags)
            .map(|ph| {
                let start = self.base.wrapping_add(ph.p_vaddr as usize);
                start..start.wrapping_add(ph.p_memsz as usize)
            })
    }
}

/// The callback [`each_object`] hands the loader: one per visitor type,
/// so the visitor is inlined into it.
unsafe extern "C" fn visit_object<F: FnMut(&Object<'_>) -> bool>(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `dl_iterate_phdr` passes a valid record and our visitor.
    let (info, visit) = unsafe { (&*info, &mut *data.cast::<F>()) };
    let headers = if info.dlpi_phdr.is_null() {
        &[][..]
    } else {
        // SAFETY: the loader's program header table of this object holds
        // `dlpi_phnum` entries.
        unsafe { core::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    let object = Object {
        base: info.dlpi_addr as usize,
        name: info.dlpi_name,
        headers,
    };
    c_int::from(visit(&object))
}

/// Shows `visit` each loaded object until it answers true.
fn each_object<F: FnMut(&Object<'_>) -> bool>(mut visit: F) {
    // SAFETY: the callback matches what dl_iterate_phdr expects and only
    // touches `visit`, of its type, for the duration of the call.
    unsafe { libc::dl_iterate_phdr(Some(visit_object::<F>), (&raw mut visit).cast()) };
}

/// How many bytes from `addr` lie within the readable (and, with
/// `need_write`, writable) loaded segment that contains it, among every
/// object the dynamic loader has mapped; `None` if no such segment holds it.
pub fn mapped_extent(addr: *const c_void, need_write: bool) -> Option<usize> {
    let (addr, mut found) = (addr as usize, None);
    let flags = if need_write {
        libc::PF_R | libc::PF_W
    } else {
        libc::PF_R
    };
    each_object(|object| {
        found = object
            .segments(flags)
            .find(|s| s.contains(&addr))
            .map(|s| s.end - addr);
        found.is_some()
    });
    found
}

/// The head of the loader's `struct link_map` of the object `handle` (a
/// `dlopen` handle): its base address and name.
fn link_map_head(handle: *mut c_void) -> Option<(usize, *const libc::c_char)> {
    let mut map: *const usize = core::ptr::null();
    // SAFETY: a live handle, and a slot for the link map pointer.
    let found = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) };
    if found != 0 || map.is_null() {
        return None;
    }
    // SAFETY: the loader's `struct link_map` of a loaded object, whose
    // public head (<link.h>) starts with `ElfW(Addr) l_addr; char *l_name;`.
    Some(unsafe { (*map, *map.add(1) as *const libc::c_char) })
}

/// glibc's `dlinfo` request for an object's program header table (glibc
/// 2.35 and later; older loaders refuse it).
const RTLD_DI_PHDR: c_int = 11;

/// Shows `visit` the object `handle` (a `dlopen` handle) names, with its
/// program headers: from `dlinfo` where the loader answers `RTLD_DI_PHDR`
/// (no walk of every loaded object), else found by `dl_iterate_phdr`.
/// `None` if the loader cannot say.
fn with_object<T>(handle: *mut c_void, visit: impl FnOnce(&Object<'_>) -> T) -> Option<T> {
    let (base, name) = link_map_head(handle)?;
    let mut table: *const ProgramHeader = core::ptr::null();
    // SAFETY: a live handle, and a slot for the table's address.
    let count = unsafe { libc::dlinfo(handle, RTLD_DI_PHDR, (&raw mut table).cast()) };
    if count > 0 && !table.is_null() {
        // SAFETY: the loader's program header table of the object, with
        // `count` entries, mapped while its handle is open.
        let headers = unsafe { core::slice::from_raw_parts(table, count as usize) };
        return Some(visit(&Object {
            base,
            name,
            headers,
        }));
    }
    // An older loader set its error for the request: clear it.
    // SAFETY: reads and clears this thread's loader error.
    unsafe { libc::dlerror() };
    let mut visit = Some(visit);
    let mut found = None;
    each_object(|object| {
        let it = object.base == base && object.name == name && !object.headers.is_empty();
        if it && let Some(v) = visit.take() {
            found = Some(v(object));
        }
        it
    });
    found
}

/// The address ranges of the loadable segments of the object `handle`
/// (a `dlopen` handle) maps; empty if the loader cannot say.
pub fn segments_of(handle: *mut c_void) -> Vec<Range<usize>> {
    with_object(handle, |object| object.segments(0).collect()).unwrap_or_default()
}

/// The device and inode of the file mapped at the first loadable
/// segment of the object `handle` (a `dlopen` handle); `None` when
/// `/proc` is not mounted or the loader cannot say. One `PROCMAP_QUERY`
/// of `/proc/self/maps` (Linux 6.11 and later), else a read of it that
/// parses only each line's range until the one holding the address.
pub fn mapped_file(handle: *mut c_void) -> Option<(u64, u64)> {
    let start = segments_of(handle).first()?.start;
    let maps = std::fs::File::open("/proc/self/maps").ok()?;
    match query_mapping(&maps, start) {
        Ok(found) => found,
        Err(()) => scan_maps(maps, start),
    }
}

/// The kernel's `struct procmap_query` (`<linux/fs.h>`, Linux 6.11).
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}
const _: () = assert!(size_of::<ProcmapQuery>() == 104);

/// `PROCMAP_QUERY`: `_IOWR('f', 17, struct procmap_query)`.
const PROCMAP_QUERY: u64 =
    (3 << 30) | ((size_of::<ProcmapQuery>() as u64) << 16) | (0x66 << 8) | 17;

/// The `(dev, inode)` of the mapping holding `addr`, asked of the
/// kernel; `Err` when the kernel does not answer such questions.
pub(super) fn query_mapping(maps: &std::fs::File, addr: usize) -> Result<Option<(u64, u64)>, ()> {
    use std::os::fd::AsRawFd;
    let mut q = ProcmapQuery {
        size: size_of::<ProcmapQuery>() as u64,
        query_addr: addr as u64,
        ..Default::default()
    };
    // SAFETY: a `/proc/self/maps` descriptor and a query of the size it
    // declares; no name or build id is asked for (sizes 0).
    let rc = unsafe { libc::ioctl(maps.as_raw_fd(), PROCMAP_QUERY as _, &mut q) };
    if rc == 0 {
        return Ok(Some((libc::makedev(q.dev_major, q.dev_minor), q.inode)));
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOENT) => Ok(None),
        _ => Err(()),
    }
}

/// The `(dev, inode)` of the `/proc/self/maps` line whose range holds
/// `addr`: each line's range is parsed, the rest only on that line.
pub(super) fn scan_maps(maps: std::fs::File, addr: usize) -> Option<(u64, u64)> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(maps);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let dash = line.iter().position(|&b| b == b'-')?;
        let space = line.iter().position(|&b| b == b' ')?;
        let hex = |b: &[u8]| usize::from_str_radix(std::str::from_utf8(b).ok()?, 16).ok();
        let (start, end) = (hex(&line[..dash])?, hex(line.get(dash + 1..space)?)?);
        if (start..end).contains(&addr) {
            return maps_line_file(std::str::from_utf8(&line).ok()?);
        }
    }
}

/// The `(dev, inode)` of a `/proc/self/maps` line
/// (`start-end perms offset major:minor inode path`).
fn maps_line_file(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_ascii_whitespace().skip(3);
    let (major, minor) = fields.next()?.split_once(':')?;
    let (major, minor) = (
        u32::from_str_radix(major, 16).ok()?,
        u32::from_str_radix(minor, 16).ok()?,
    );
    let inode = fields.next()?.parse().ok()?;
    Some((libc::makedev(major, minor), inode))
}

/// The loaded object holding `addr`: its bias (what its file's addresses
/// are shifted by), the ranges of its loadable segments, and its path (the
/// program's own for the unnamed object).
pub fn object_holding(addr: usize) -> Option<(usize, Vec<Range<usize>>, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let mut found = None;
    each_object(|object| {
        let ranges: Vec<Range<usize>> = object.segments(0).collect();
        if !ranges.iter().any(|r| r.contains(&addr)) {
            return false;
        }
        let name = if object.name.is_null() {
            &[][..]
        } else {
            // SAFETY: a loaded object's name is NUL-terminated.
            unsafe { core::ffi::CStr::from_ptr(object.name) }.to_bytes()
        };
        let path = if name.is_empty() {
            std::env::current_exe().unwrap_or_default()
        } else {
            std::path::PathBuf::from(std::ffi::OsStr::from_bytes(name))
        };
        found = Some((object.base, ranges, path));
        true
    });
    found
}

/// The end of the loaded segments of the object whose base is `base`.
pub fn object_end(base: usize) -> Option<usize> {
    let mut end = None;
    each_object(|object| {
        let it = object.base == base && !object.headers.is_empty();
        if it {
            end = object.segments(0).map(|s| s.end).max();
        }
        it
    });
    end
}

/// The dynamic loader's counts of objects loaded and unloaded so far
/// (`dlpi_adds`, `dlpi_subs`): one step of `dl_iterate_phdr`.
pub fn loader_counts() -> Option<(u64, u64)> {
    unsafe extern "C" fn counts(
        info: *mut libc::dl_phdr_info,
        size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader hands a valid record of `size` bytes and our
        // `Option<(u64, u64)>`; the counts exist when the record is that long.
        let (info, out) = unsafe { (&*info, &mut *data.cast::<Option<(u64, u64)>>()) };
        if size >= core::mem::offset_of!(libc::dl_phdr_info, dlpi_subs) + 8 {
            *out = Some((info.dlpi_adds, info.dlpi_subs));
        }
        1
    }
    let mut now = None;
    // SAFETY: the callback only writes `now`, of its type.
    unsafe { libc::dl_iterate_phdr(Some(counts), (&raw mut now).cast()) };
    now
}

/// Whether a loaded object has the name `name` (so `dlopen(name)` would
/// answer with it, whatever file the name leads to now). Walks the loaded
/// objects; opens nothing.
pub fn name_loaded(name: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let name = name.as_os_str().as_bytes();
    let mut found = false;
    each_object(|object| {
        // SAFETY: a loaded object's name is NUL-terminated when present.
        found = !object.name.is_null()
            && unsafe { core::ffi::CStr::from_ptr(object.name) }.to_bytes() == name;
        found
    });
    found
}

/// Whether the ELF file at `path` names `soname` in a `DT_NEEDED` entry. A
/// file that cannot be read, is not ELF or has no readable dynamic section
/// answers false.
pub fn needs(path: &Path, soname: &[u8]) -> bool {
    let Ok(file) = crate::platform::os::open_for_check(path) else {
        return false;
    };
    super::dynamic::dynamic_strings(&object::ReadCache::new(&file), &[elf::DT_NEEDED])
        .is_some_and(|names| names.iter().any(|n| n == soname))
}

/// The data objects whose names start with `prefix` that the object
/// `handle` (a `dlopen` handle) defines in its dynamic symbol table, read
/// from the image already mapped (never from its file). Every read lies in
/// one of the object's readable loaded segments, so a table that claims more
/// than the image holds is cut short, and the walk is linear in the image;
/// `None` when the loader cannot say or the image has no such table.
pub fn data_objects_of(handle: *mut c_void, prefix: &[u8]) -> Option<Vec<DataObject>> {
    with_object(handle, |object| {
        LoadedImage::new(object).and_then(|image| image.data_objects(prefix))
    })
    .flatten()
}

/// The readable loaded segments of one object, as byte slices.
struct LoadedImage<'a> {
    base: usize,
    segments: Vec<&'a [u8]>,
    dynamic: &'a [u8],
}

/// `ElfW(Sym)`: its size, and the offsets of `st_value`, `st_size`,
/// `st_info` and `st_shndx`.
#[cfg(target_pointer_width = "64")]
const SYM: (usize, usize, usize, usize, usize) = (24, 8, 16, 4, 6);
#[cfg(target_pointer_width = "32")]
const SYM: (usize, usize, usize, usize, usize) = (16, 4, 8, 12, 14);
const WORD: usize = size_of::<usize>();
// The ELF constants read here (elf.h).
const DT_NULL: usize = 0;
const DT_HASH: usize = 4;
const DT_STRTAB: usize = 5;
const DT_SYMTAB: usize = 6;
const DT_STRSZ: usize = 10;
const DT_GNU_HASH: usize = 0x6fff_fef5;
const STT_OBJECT: u8 = 1;
const SHN_UNDEF: u16 = 0;
const SHN_LORESERVE: u16 = 0xff00;

impl<'a> LoadedImage<'a> {
    fn new(object: &Object<'a>) -> Option<LoadedImage<'a>> {
        let segments: Vec<&[u8]> = object
            .segments(libc::PF_R)
            .filter(|s| s.start < s.end)
            // SAFETY: a readable loaded segment of an object that stays
            // mapped while its handle is open (the caller holds it).
            .map(|s| unsafe { core::slice::from_raw_parts(s.start as *const u8, s.len()) })
            .collect();
        let dynamic = object
            .headers
            .iter()
            .find(|ph| ph.p_type == libc::PT_DYNAMIC)?;
        let mut image = LoadedImage {
            base: object.base,
            segments,
            dynamic: &[],
        };
        let start = object.base.wrapping_add(dynamic.p_vaddr as usize);
        image.dynamic = image.bytes(start, dynamic.p_memsz as usize)?;
        Some(image)
    }

    /// The `len` bytes at `addr`, if one readable segment holds them all.
    fn bytes(&self, addr: usize, len: usize) -> Option<&'a [u8]> {
        self.segments.iter().find_map(|s| {
            let offset = addr.checked_sub(s.as_ptr() as usize)?;
            s.get(offset..offset.checked_add(len)?)
        })
    }

    /// The bytes from `addr` to the end of the segment holding it.
    fn tail(&self, addr: usize) -> Option<&'a [u8]> {
        self.segments.iter().find_map(|s| {
            let offset = addr.checked_sub(s.as_ptr() as usize)?;
            s.get(offset..)
        })
    }

    fn u32_at(&self, addr: usize) -> Option<u32> {
        Some(u32::from_ne_bytes(self.bytes(addr, 4)?.try_into().ok()?))
    }

    /// The value of dynamic entry `tag`, as an address in this process:
    /// glibc relocates the entries in place where the section is writable,
    /// other loaders leave them relative to the base.
    fn dynamic_address(&self, tag: usize) -> Option<usize> {
        let value = self.dynamic_value(tag)?;
        if self.tail(value).is_some() {
            return Some(value);
        }
        let relocated = self.base.wrapping_add(value);
        self.tail(relocated).map(|_| relocated)
    }

    fn dynamic_value(&self, tag: usize) -> Option<usize> {
        self.dynamic
            .chunks_exact(2 * WORD)
            .map(|e| {
                let (t, v) = e.split_at(WORD);
                let word = |b: &[u8]| usize::from_ne_bytes(b.try_into().unwrap_or_default());
                (word(t), word(v))
            })
            .take_while(|&(t, _)| t != DT_NULL)
            .find(|&(t, _)| t == tag)
            .map(|(_, v)| v)
    }

    /// How many entries the dynamic symbol table has: `DT_HASH`'s chain
    /// count, else one past the last symbol `DT_GNU_HASH` reaches.
    fn symbol_count(&self) -> Option<usize> {
        if let Some(hash) = self.dynamic_address(DT_HASH) {
            return Some(self.u32_at(hash.checked_add(4)?)? as usize);
        }
        let gnu = self.dynamic_address(DT_GNU_HASH)?;
        let (buckets, offset, bloom) = (
            self.u32_at(gnu)? as usize,
            self.u32_at(gnu.checked_add(4)?)? as usize,
            self.u32_at(gnu.checked_add(8)?)? as usize,
        );
        let first_bucket = gnu.checked_add(16)?.checked_add(bloom.checked_mul(WORD)?)?;
        let table = self.bytes(first_bucket, buckets.checked_mul(4)?)?;
        let last = table
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap_or_default()) as usize)
            .max()
            .unwrap_or(0);
        if last < offset {
            return Some(offset);
        }
        // The chain of the last bucket ends at the table's last symbol.
        let chains = first_bucket.checked_add(buckets * 4)?;
        let mut index = last;
        loop {
            let at = chains.checked_add(index.checked_sub(offset)?.checked_mul(4)?)?;
            if self.u32_at(at)? & 1 == 1 {
                return Some(index + 1);
            }
            index += 1;
        }
    }

    fn data_objects(&self, prefix: &[u8]) -> Option<Vec<DataObject>> {
        let symtab = self.dynamic_address(DT_SYMTAB)?;
        let strtab = self.dynamic_address(DT_STRTAB)?;
        let strings = self.tail(strtab)?;
        let strings = &strings[..self
            .dynamic_value(DT_STRSZ)
            .map_or(strings.len(), |n| n.min(strings.len()))];
        let (entry, value_at, size_at, info_at, shndx_at) = SYM;
        let table = self.tail(symtab)?;
        let count = self.symbol_count()?.min(table.len() / entry);
        let field = |sym: &[u8], at: usize, len: usize| {
            let mut b = [0u8; 8];
            b[..len].copy_from_slice(&sym[at..at + len]);
            u64::from_ne_bytes(b) as usize
        };
        let mut out = Vec::new();
        for sym in table[..count * entry].chunks_exact(entry) {
            let shndx = u16::from_ne_bytes([sym[shndx_at], sym[shndx_at + 1]]);
            if sym[info_at] & 0xf != STT_OBJECT || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE {
                continue;
            }
            let name_at = u32::from_ne_bytes(sym[..4].try_into().unwrap_or_default()) as usize;
            let Some(name) = strings.get(name_at..).and_then(|s| {
                let end = s.iter().position(|&c| c == 0)?;
                s[..end].starts_with(prefix).then(|| &s[..end])
            }) else {
                continue;
            };
            out.push(DataObject {
                name: String::from_utf8_lossy(name).into_owned(),
                addr: self.base.wrapping_add(field(sym, value_at, WORD)),
                size: field(sym, size_at, WORD),
            });
        }
        Some(out)
    }
}
