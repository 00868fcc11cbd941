//! What the loader may touch of a library file or a loaded image, and how it
//! checks before touching it:
//!
//! - [`open_regular`]: a file opened without blocking (a FIFO cannot stall
//!   us) and refused unless it is a regular file;
//! - [`check_loadable`]: before `dlopen`, the ELF header, the program
//!   headers and every loadable segment (PE: headers and sections) lie
//!   within the file's length, so a
//!   library cut short (an interrupted compiler or copy) is refused instead
//!   of killing the process with SIGBUS inside the dynamic loader;
//! - [`mapped_extent`]: after `dlopen`, how many bytes from an address stay
//!   within the loaded segment that holds it (the bound of an embedded blob,
//!   whatever size its symbol claims, and the check that a context symbol is
//!   writable);
//! - [`map_file`]: a regular file mapped read-only, bounded by its length;
//! - [`own_shared_object`]: the path of this library when it is loaded as a
//!   shared object (what native code built at run time links against).

use crate::core::model::error::{Error, Result};
use crate::core::model::os;
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use std::fs::File;
use std::path::Path;

/// A check's outcome: on failure, the reason, for the caller's message.
pub type Reason<T> = std::result::Result<T, String>;

/// Opens `path` for reading without blocking and checks that it is a
/// regular file; returns it with its metadata. The inner error is the
/// system's when it cannot be opened at all; the outer one names what the
/// file is when it is not regular.
pub fn open_regular(path: &Path) -> Reason<std::io::Result<(File, std::fs::Metadata)>> {
    let file = match os::open_for_check(path) {
        Ok(file) => file,
        Err(e) => return Ok(Err(e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{} is {}, not a regular file",
            path.display(),
            os::file_type_name(meta.file_type())
        ));
    }
    Ok(Ok((file, meta)))
}

/// Checks that an ELF file of `len` bytes has its header, program headers
/// and loadable segments within its length (a PE file: its headers and
/// sections). Files of other formats pass: the system loader refuses them
/// cleanly itself ("invalid ELF header").
/// The headers are read with one `pread` of the first 4 KiB, where they
/// nearly always lie; only headers beyond it are read piecewise.
pub fn check_loadable(path: &Path, file: &File, len: u64) -> Reason<()> {
    let mut head = [0u8; 4096];
    let n =
        read_head(file, &mut head).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match check_elf(&head[..n], path, len) {
        Err(_) if (n as u64) < len => check_elf(&object::ReadCache::new(file), path, len),
        outcome => outcome,
    }
}

/// [`check_loadable`] of a whole file's bytes.
#[cfg(unix)]
pub fn check_loadable_bytes(path: &Path, bytes: &[u8]) -> Reason<()> {
    check_elf(bytes, path, bytes.len() as u64)
}

/// Reads the start of `file` into `buf`, as far as the file goes; answers
/// how many bytes it read.
fn read_head(file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match os::read_at(file, &mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// [`check_loadable`] over `data`, the file's bytes (all or its start).
fn check_elf<'d, R: object::ReadRef<'d>>(data: R, path: &Path, len: u64) -> Reason<()> {
    let truncated = |what: &str| {
        format!(
            "{} is cut short ({len} bytes): {what} lies beyond its end",
            path.display()
        )
    };
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Elf64) => {
            check_segments::<elf::FileHeader64<object::Endianness>, R>(data, len, truncated)
        }
        Ok(object::FileKind::Elf32) => {
            check_segments::<elf::FileHeader32<object::Endianness>, R>(data, len, truncated)
        }
        Ok(object::FileKind::Pe64) => {
            check_sections::<object::pe::ImageNtHeaders64, R>(data, len, truncated)
        }
        Ok(object::FileKind::Pe32) => {
            check_sections::<object::pe::ImageNtHeaders32, R>(data, len, truncated)
        }
        _ => Ok(()),
    }
}

/// The PE counterpart of [`check_segments`]: the headers and every
/// section's raw data lie within the file's `len` bytes.
fn check_sections<'d, H: object::read::pe::ImageNtHeaders, R: object::ReadRef<'d>>(
    data: R,
    len: u64,
    truncated: impl Fn(&str) -> String,
) -> Reason<()> {
    let dos = object::pe::ImageDosHeader::parse(data).map_err(|_| truncated("the DOS header"))?;
    let mut offset = dos.nt_headers_offset().into();
    let (nt, _) = H::parse(data, &mut offset).map_err(|_| truncated("the PE header"))?;
    let sections = nt
        .sections(data, offset)
        .map_err(|_| truncated("the section table"))?;
    for (i, section) in sections.iter().enumerate() {
        // The raw data as the section table gives it (the loader reads it
        // whole; `pe_file_range` would cut it to the virtual size).
        let start = u64::from(section.pointer_to_raw_data.get(object::LittleEndian));
        let size = u64::from(section.size_of_raw_data.get(object::LittleEndian));
        if start.checked_add(size).is_none_or(|end| end > len) {
            return Err(truncated(&format!(
                "section {i} (bytes {start}..{})",
                start.saturating_add(size)
            )));
        }
    }
    Ok(())
}

fn check_segments<'d, H: FileHeader<Endian = object::Endianness>, R: object::ReadRef<'d>>(
    data: R,
    len: u64,
    truncated: impl Fn(&str) -> String,
) -> Reason<()> {
    let header = H::parse(data).map_err(|_| truncated("the ELF header"))?;
    let endian = header
        .endian()
        .map_err(|e| format!("bad ELF header: {e}"))?;
    let segments = header
        .program_headers(endian, data)
        .map_err(|_| truncated("the program header table"))?;
    for (i, ph) in segments.iter().enumerate() {
        if ph.p_type(endian) != elf::PT_LOAD {
            continue;
        }
        let offset: u64 = ph.p_offset(endian).into();
        let size: u64 = ph.p_filesz(endian).into();
        if offset.checked_add(size).is_none_or(|end| end > len) {
            return Err(truncated(&format!(
                "loadable segment {i} (bytes {offset}..{})",
                offset.saturating_add(size)
            )));
        }
    }
    Ok(())
}

/// Whether an ELF file names `$ORIGIN` in its `DT_NEEDED`, `DT_RPATH` or
/// `DT_RUNPATH` entries: it finds libraries relative to its own directory,
/// so the loader must open it by a path in that directory. A file that is
/// not ELF or whose dynamic section cannot be read answers false.
#[cfg(unix)]
pub fn uses_origin(file: &File) -> bool {
    origin_named(&object::ReadCache::new(file))
}

/// [`uses_origin`] of a file's bytes.
#[cfg(unix)]
pub fn uses_origin_in(bytes: &[u8]) -> bool {
    origin_named(bytes)
}

#[cfg(unix)]
fn origin_named<'d, R: object::ReadRef<'d>>(data: R) -> bool {
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Elf64) => {
            origin_in::<elf::FileHeader64<object::Endianness>, _>(data).unwrap_or(false)
        }
        Ok(object::FileKind::Elf32) => {
            origin_in::<elf::FileHeader32<object::Endianness>, _>(data).unwrap_or(false)
        }
        _ => false,
    }
}

#[cfg(unix)]
fn origin_in<'d, H: FileHeader<Endian = object::Endianness>, R: object::ReadRef<'d>>(
    data: R,
) -> Option<bool> {
    use object::read::elf::Dyn;
    let header = H::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, data).ok()?;
    let dynamic = segments
        .iter()
        .find_map(|ph| ph.dynamic(endian, data).ok().flatten())?;
    let value = |tag: elf::DynamicTag| {
        dynamic
            .iter()
            .find(|d| d.tag(endian) == tag)
            .map(|d| d.val(endian))
    };
    let (strtab, strsz): (u64, u64) = (value(elf::DT_STRTAB)?, value(elf::DT_STRSZ)?);
    // The string table's file offset, through the loadable segment holding it.
    let offset = segments.iter().find_map(|ph| {
        let (vaddr, filesz): (u64, u64) = (ph.p_vaddr(endian).into(), ph.p_filesz(endian).into());
        let within =
            ph.p_type(endian) == elf::PT_LOAD && strtab >= vaddr && strtab - vaddr < filesz;
        within.then(|| Into::<u64>::into(ph.p_offset(endian)) + (strtab - vaddr))
    })?;
    let table = data.read_bytes_at(offset, strsz).ok()?;
    let names_origin = |d: &H::Dyn| {
        let at = usize::try_from(d.val(endian)).ok()?;
        let text = table.get(at..)?;
        let text = &text[..text.iter().position(|&b| b == 0)?];
        Some(text.windows(7).any(|w| w == b"$ORIGIN") || text.windows(9).any(|w| w == b"${ORIGIN}"))
    };
    Some(dynamic.iter().any(|d| {
        [elf::DT_NEEDED, elf::DT_RPATH, elf::DT_RUNPATH].contains(&d.tag(endian))
            && names_origin(d) == Some(true)
    }))
}

#[cfg(target_os = "linux")]
pub use loaded::{mapped_extent, mapped_file, name_loaded, segments_of};

/// The loaded objects, as the Linux dynamic loader lists them
/// (`dl_iterate_phdr`, `dlinfo`).
#[cfg(target_os = "linux")]
mod loaded {
    use core::ffi::{c_int, c_void};
    use core::ops::Range;
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

    /// The address ranges of the loadable segments of the object `handle`
    /// (a `dlopen` handle) maps; empty if the loader cannot say.
    pub fn segments_of(handle: *mut c_void) -> Vec<Range<usize>> {
        let Some((base, name)) = link_map_head(handle) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        each_object(|object| {
            let it = object.base == base && object.name == name && !object.headers.is_empty();
            if it {
                found = object.segments(0).collect();
            }
            it
        });
        found
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
    pub(super) fn query_mapping(
        maps: &std::fs::File,
        addr: usize,
    ) -> Result<Option<(u64, u64)>, ()> {
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
}

#[cfg(not(any(target_os = "linux", windows)))]
pub use elsewhere::{mapped_extent, mapped_file, name_loaded, segments_of};

#[cfg(windows)]
pub use pe_images::{mapped_extent, segments_of};

/// Loaded PE images, as the memory manager describes their pages
/// (`VirtualQuery`): each section is mapped as pages of one protection, and
/// every page of an image shares its allocation base, the module handle.
#[cfg(windows)]
mod pe_images {
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
}

/// Elsewhere (macOS), no walk of the loaded objects yet: the answers
/// are the conservative "cannot say". So a library's embedded blob and
/// context symbols are not used (loading it reports the symbol is not in a
/// loaded segment), and a released library is never unmapped.
#[cfg(not(any(target_os = "linux", windows)))]
mod elsewhere {
    use core::ffi::c_void;
    use std::path::Path;

    /// See the Linux version: `None`, the extent is unknown here.
    pub fn mapped_extent(_addr: *const c_void, _need_write: bool) -> Option<usize> {
        None
    }

    /// See the Linux version: empty, the loader cannot say here.
    pub fn segments_of(_handle: *mut c_void) -> Vec<core::ops::Range<usize>> {
        Vec::new()
    }

    /// See the Linux version: `false`, the loader cannot say here.
    pub fn name_loaded(_name: &Path) -> bool {
        false
    }

    /// See the Linux version: `None`, no `/proc` here.
    pub fn mapped_file(_handle: *mut c_void) -> Option<(u64, u64)> {
        None
    }
}

/// A regular file mapped read-only; its bytes are bounded by its length.
pub fn map_file(path: &Path) -> Result<memmap2::Mmap> {
    let (file, _) = open_regular(path)
        .map_err(Error::value)?
        .map_err(|e| Error::runtime(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: a read-only private mapping of a regular file. If another
    // process truncates the file while it is mapped, reads past the new end
    // fault: the one hazard of mapping, accepted as for any mapped library.
    unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Error::runtime(format!("cannot map {}: {e}", path.display())))
}

/// The path of the shared object holding this library's code, or None when
/// it is linked into an executable (as a Rust rlib or a static library).
#[cfg(unix)]
pub fn own_shared_object() -> Option<std::path::PathBuf> {
    // SAFETY: an all-zero Dl_info is a valid value to be filled in.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    let addr = own_shared_object as *const core::ffi::c_void;
    // SAFETY: dladdr only reads the address and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string the loader keeps.
    let name = unsafe { core::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
    let is_shared = name.ends_with(b".so")
        || name.windows(4).any(|w| w == b".so.")
        || name.ends_with(b".dylib");
    is_shared.then(|| os::path_from_bytes(name).into_owned())
}

/// The path of the DLL holding this library's code, or None when it is
/// linked into an executable.
#[cfg(windows)]
pub fn own_shared_object() -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::LibraryLoader::{
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
        GetModuleFileNameW, GetModuleHandleExW,
    };
    let mut module = core::ptr::null_mut();
    let flags =
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT;
    // SAFETY: with FROM_ADDRESS the "name" is an address inside this
    // library; the handle is written to `module` and not counted.
    let found = unsafe { GetModuleHandleExW(flags, own_shared_object as *const u16, &mut module) };
    if found == 0 {
        return None;
    }
    let mut name = vec![0u16; 32768];
    // SAFETY: a live module and a buffer of the length given.
    let n = unsafe { GetModuleFileNameW(module, name.as_mut_ptr(), name.len() as u32) } as usize;
    name.truncate(n);
    let path = std::path::PathBuf::from(std::ffi::OsString::from_wide(&name));
    let is_dll = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dll"));
    (n > 0 && is_dll).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A little-endian ELF64 file of `len` bytes whose program header table
    /// (one PT_LOAD of `seg` = (offset, size)) lies at `phoff`.
    fn elf(len: usize, phoff: usize, seg: (u64, u64)) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2; // ELFCLASS64
        b[5] = 1; // little-endian
        b[6] = 1; // EV_CURRENT
        b[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        b[18..20].copy_from_slice(&62u16.to_le_bytes()); // x86-64
        b[20..24].copy_from_slice(&1u32.to_le_bytes());
        b[32..40].copy_from_slice(&(phoff as u64).to_le_bytes());
        b[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        b[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
        b[56..58].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
        let ph = &mut b[phoff..phoff + 56];
        ph[..4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        ph[8..16].copy_from_slice(&seg.0.to_le_bytes()); // p_offset
        ph[32..40].copy_from_slice(&seg.1.to_le_bytes()); // p_filesz
        b
    }

    /// A PE32+ file of `len` bytes with one section whose raw data is
    /// `raw` = (file offset, size).
    fn pe(len: usize, raw: (u32, u32)) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[..2].copy_from_slice(b"MZ");
        b[0x3c..0x40].copy_from_slice(&0x40u32.to_le_bytes()); // e_lfanew
        b[0x40..0x44].copy_from_slice(b"PE\0\0");
        let fh = 0x44;
        b[fh..fh + 2].copy_from_slice(&0x8664u16.to_le_bytes()); // AMD64
        b[fh + 2..fh + 4].copy_from_slice(&1u16.to_le_bytes()); // one section
        b[fh + 16..fh + 18].copy_from_slice(&240u16.to_le_bytes()); // optional header size
        let oh = fh + 20;
        b[oh..oh + 2].copy_from_slice(&0x20bu16.to_le_bytes()); // PE32+
        b[oh + 108..oh + 112].copy_from_slice(&16u32.to_le_bytes()); // data directories
        let sh = oh + 240;
        b[sh..sh + 5].copy_from_slice(b".text");
        b[sh + 16..sh + 20].copy_from_slice(&raw.1.to_le_bytes()); // SizeOfRawData
        b[sh + 20..sh + 24].copy_from_slice(&raw.0.to_le_bytes()); // PointerToRawData
        b
    }

    #[test]
    fn a_pe_file_cut_short_is_refused() {
        assert_eq!(check(&pe(4096, (1024, 1024))), Ok(()));
        let err = check(&pe(4096, (1024, 4096))).unwrap_err();
        assert!(
            err.contains("cut short (4096 bytes): section 0 (bytes 1024..5120)"),
            "{err}"
        );
        // The headers, then the section table, cut off.
        let err = check(&pe(4096, (0, 0))[..0x100]).unwrap_err();
        assert!(err.contains("the PE header lies beyond its end"), "{err}");
        let err = check(&pe(4096, (0, 0))[..0x160]).unwrap_err();
        assert!(
            err.contains("the section table lies beyond its end"),
            "{err}"
        );
    }

    fn check(bytes: &[u8]) -> Reason<()> {
        let mut f = temp_file();
        f.1.write_all(bytes).unwrap();
        let file = File::open(&f.0).unwrap();
        let out = check_loadable(&f.0, &file, bytes.len() as u64);
        std::fs::remove_file(&f.0).unwrap();
        out
    }

    fn temp_file() -> (std::path::PathBuf, File) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "tvm-ffi-image-{}-{}.so",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let file = File::create(&path).unwrap();
        (path, file)
    }

    /// The kernel's answer and the scan of `/proc/self/maps` agree, and
    /// name the file this test's code is mapped from.
    #[cfg(target_os = "linux")]
    #[test]
    fn both_readings_of_a_mapping_agree() {
        use std::os::unix::fs::MetadataExt;
        let addr = both_readings_of_a_mapping_agree as fn() as usize;
        let exe = std::fs::metadata(std::env::current_exe().unwrap()).unwrap();
        let maps = || File::open("/proc/self/maps").unwrap();
        let scanned = loaded::scan_maps(maps(), addr);
        assert_eq!(scanned, Some((exe.dev(), exe.ino())));
        if let Ok(asked) = loaded::query_mapping(&maps(), addr) {
            assert_eq!(asked, scanned);
        }
        assert_eq!(loaded::scan_maps(maps(), 8), None);
    }

    #[test]
    fn headers_in_the_first_read_and_beyond_it() {
        // Program headers right after the ELF header (the first 4 KiB read).
        assert_eq!(check(&elf(6000, 64, (0, 6000))), Ok(()));
        let err = check(&elf(6000, 64, (4096, 4096))).unwrap_err();
        assert!(
            err.contains("cut short (6000 bytes): loadable segment 0"),
            "{err}"
        );
        // Program headers beyond the first 4 KiB: read piecewise.
        assert_eq!(check(&elf(9000, 8192, (0, 9000))), Ok(()));
        let err = check(&elf(9000, 8192, (0, 9001))).unwrap_err();
        assert!(
            err.contains("cut short (9000 bytes): loadable segment 0"),
            "{err}"
        );
        // A file shorter than its header claims, and a non-ELF file.
        let err = check(&elf(6000, 64, (0, 1))[..40]).unwrap_err();
        assert!(err.contains("the ELF header"), "{err}");
        assert_eq!(check(b"not an ELF file"), Ok(()));
    }
}
