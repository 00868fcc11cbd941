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
//! - [`data_objects_of`]: the data objects an image defines, read from the
//!   image already mapped (a library's context slots);
//! - [`map_file`]: a regular file mapped read-only, bounded by its length;
//! - [`own_shared_object`]: the path of this library when it is loaded as a
//!   shared object (what native code built at run time links against).
//!
//! Per system: `linux.rs` (the loaded objects, from `dl_iterate_phdr`),
//! `windows.rs` (loaded PE images, from `VirtualQuery`), `elsewhere.rs`
//! (other systems: "cannot say"), `unix.rs` (what every Unix shares) and
//! `dynamic.rs` (an ELF file's dynamic section, read on Unix).
// Layers, lowest first: dynamic symbol, elsewhere linux unix windows.

#[cfg(unix)]
mod dynamic;
#[cfg(not(any(target_os = "linux", windows)))]
mod elsewhere;
#[cfg(target_os = "linux")]
mod linux;
mod symbol;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use dynamic::{uses_origin, uses_origin_in};
#[cfg(not(any(target_os = "linux", windows)))]
pub use elsewhere::{
    loader_counts, mapped_extent, mapped_file, name_loaded, object_end, object_holding, segments_of,
};
#[cfg(target_os = "linux")]
pub use linux::{
    data_objects_of, loader_counts, mapped_extent, mapped_file, name_loaded, needs, object_end,
    object_holding, segments_of,
};
pub use symbol::{AddressSymbol, DataObject};
#[cfg(unix)]
pub use unix::{path_of_address, process_symbol, symbol_at};
#[cfg(windows)]
pub use windows::{
    loader_counts, mapped_extent, object_end, object_holding, path_of_address, process_symbol,
    segments_of, symbol_at,
};

use crate::platform::failure::{Failure, Result};
use crate::platform::os;
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

/// A regular file mapped read-only; its bytes are bounded by its length.
pub fn map_file(path: &Path) -> Result<memmap2::Mmap> {
    let (file, _) = open_regular(path)
        .map_err(Failure::value)?
        .map_err(|e| Failure::runtime(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: a read-only private mapping of a regular file. If another
    // process truncates the file while it is mapped, reads past the new end
    // fault: the one hazard of mapping, accepted as for any mapped library.
    unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Failure::runtime(format!("cannot map {}: {e}", path.display())))
}

/// Where the system cannot list an image's data objects from memory
/// (`None`: the caller reads the library's file instead).
#[cfg(not(target_os = "linux"))]
pub fn data_objects_of(_handle: *mut core::ffi::c_void, _prefix: &[u8]) -> Option<Vec<DataObject>> {
    None
}

/// The path of the shared object holding this library's code, or None when
/// it is linked into an executable (as a Rust rlib or a static library).
pub fn own_shared_object() -> Option<std::path::PathBuf> {
    let path = path_of_address(own_shared_object as *const () as usize)?;
    let name = os::path_bytes(&path);
    let is_shared = name.ends_with(b".so")
        || name.windows(4).any(|w| w == b".so.")
        || name.ends_with(b".dylib")
        || name.len() >= 4 && name[name.len() - 4..].eq_ignore_ascii_case(b".dll");
    is_shared.then_some(path)
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
        let scanned = linux::scan_maps(maps(), addr);
        assert_eq!(scanned, Some((exe.dev(), exe.ino())));
        if let Ok(asked) = linux::query_mapping(&maps(), addr) {
            assert_eq!(asked, scanned);
        }
        assert_eq!(linux::scan_maps(maps(), 8), None);
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
