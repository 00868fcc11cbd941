//! What an ELF file's dynamic section names (`DT_NEEDED`, `DT_RPATH`,
//! `DT_RUNPATH`), read from its bytes: the libraries it needs and where it
//! looks for them.

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use std::fs::File;

/// Whether an ELF file names `$ORIGIN` in its `DT_NEEDED`, `DT_RPATH` or
/// `DT_RUNPATH` entries: it finds libraries relative to its own directory,
/// so the loader must open it by a path in that directory. A file that is
/// not ELF or whose dynamic section cannot be read answers false.
pub fn uses_origin(file: &File) -> bool {
    origin_named(&object::ReadCache::new(file))
}

/// [`uses_origin`] of a file's bytes.
pub fn uses_origin_in(bytes: &[u8]) -> bool {
    origin_named(bytes)
}

fn origin_named<'d, R: object::ReadRef<'d>>(data: R) -> bool {
    let names_origin = |text: &[u8]| {
        text.windows(7).any(|w| w == b"$ORIGIN") || text.windows(9).any(|w| w == b"${ORIGIN}")
    };
    dynamic_strings(data, &[elf::DT_NEEDED, elf::DT_RPATH, elf::DT_RUNPATH])
        .is_some_and(|names| names.iter().any(|n| names_origin(n)))
}

/// The strings of an ELF file's dynamic entries with one of `tags`, if it is
/// ELF and its dynamic section can be read.
pub(super) fn dynamic_strings<'d, R: object::ReadRef<'d>>(
    data: R,
    tags: &[elf::DynamicTag],
) -> Option<Vec<Vec<u8>>> {
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Elf64) => {
            dynamic_strings_of::<elf::FileHeader64<object::Endianness>, _>(data, tags)
        }
        Ok(object::FileKind::Elf32) => {
            dynamic_strings_of::<elf::FileHeader32<object::Endianness>, _>(data, tags)
        }
        _ => None,
    }
}

fn dynamic_strings_of<'d, H: FileHeader<Endian = object::Endianness>, R: object::ReadRef<'d>>(
    data: R,
    tags: &[elf::DynamicTag],
) -> Option<Vec<Vec<u8>>> {
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
    let text = |d: &H::Dyn| {
        let at = usize::try_from(d.val(endian)).ok()?;
        let text = table.get(at..)?;
        Some(text[..text.iter().position(|&b| b == 0)?].to_vec())
    };
    Some(
        dynamic
            .iter()
            .filter(|d| tags.contains(&d.tag(endian)))
            .filter_map(text)
            .collect(),
    )
}
