//! Reading shared libraries and object files without running them: the
//! exported `__tvm_ffi_<name>` functions and the embedded
//! `__tvm_ffi__library_bin`, through the `object` crate.
#![forbid(unsafe_code)]

use super::library_bin::{self, LIB_KIND};
use super::symbols::*;
use crate::runtime::model::error::{Error, Result};
use object::{Object, ObjectSection, ObjectSymbol};

/// What a library or object file carries, read without loading it.
#[derive(Debug, Default)]
pub struct Inspection {
    /// The `<name>`s of exported `__tvm_ffi_<name>` functions, sorted.
    pub functions: Vec<String>,
    /// The decoded module tree, if the file embeds one.
    pub library_bin: Option<Vec<ModuleSummary>>,
    /// Embedded CUDA binaries: `(name, bytes)` of each
    /// `__tvm_ffi__cubin_<name>` / `__tvm_ffi__cubin_<name>_end` pair.
    pub cubins: Vec<(String, u64)>,
}

/// A file's bytes for inspection: a regular file, mapped read-only (a FIFO,
/// a device or a directory is refused with what it is; an 8 GiB sparse
/// file costs nothing until read).
pub fn map_file(path: &std::path::Path) -> Result<memmap2::Mmap> {
    Ok(crate::platform::image::map_file(path)?)
}

/// The prefix of embedded cubin symbols (start; the end adds `_end`).
pub(crate) const CUBIN_PREFIX: &str = "__tvm_ffi__cubin_";

/// One module of an embedded tree.
#[derive(Debug, PartialEq, Eq)]
pub struct ModuleSummary {
    /// The kind (`_lib` for the library itself).
    pub kind: String,
    /// The payload size in bytes (0 for `_lib`).
    pub size: usize,
    /// The modules it imports.
    pub imports: Vec<usize>,
    /// What the payload holds, one line each, for kinds this library reads
    /// (`cuda`: the code and each kernel's signature, cross-checked).
    pub detail: Vec<String>,
}

/// A symbol a file defines: its name, address, size (0 where the format
/// records none: a PE DLL's exports) and whether it is code.
struct Defined<'d> {
    name: &'d str,
    address: u64,
    size: u64,
    code: bool,
    /// Its section, where the symbol names one (an object file's symbols
    /// are offsets in their section, whose address is 0 in every section).
    section: Option<object::SectionIndex>,
}

/// Every symbol `file` defines: both ELF symbol tables (or the object's
/// one), and a PE DLL's export table, which is all a stripped DLL has.
fn defined<'d>(file: &object::File<'d>) -> Vec<Defined<'d>> {
    let mut out: Vec<Defined<'d>> = file
        .dynamic_symbols()
        .chain(file.symbols())
        .filter(|sym| sym.is_definition())
        .filter_map(|sym| {
            Some(Defined {
                name: sym.name().ok()?,
                address: sym.address(),
                size: sym.size(),
                code: sym.kind() == object::SymbolKind::Text,
                section: sym.section_index(),
            })
        })
        .collect();
    // ELF files list the same symbols in their dynamic table, with sizes.
    let exports = (file.format() == object::BinaryFormat::Pe).then(|| file.exports());
    for export in exports.into_iter().flatten().flatten().flatten() {
        let object::ExportTarget::Address { address } = export.target() else {
            continue;
        };
        // A PE export's name is the file's own bytes.
        let object::NameOrOrdinal::Name(std::borrow::Cow::Borrowed(name)) = export.into_name()
        else {
            continue;
        };
        let Ok(name) = core::str::from_utf8(name) else {
            continue;
        };
        let section = section_at(file, address);
        out.push(Defined {
            name,
            address,
            size: 0,
            code: section
                .as_ref()
                .is_some_and(|s| s.kind() == object::SectionKind::Text),
            section: section.map(|s| s.index()),
        });
    }
    out
}

/// The section holding `address`.
fn section_at<'d, 'f>(file: &'f object::File<'d>, address: u64) -> Option<object::Section<'d, 'f>> {
    file.sections()
        .find(|s| address >= s.address() && address - s.address() < s.size())
}

/// The embedded `__tvm_ffi__library_bin` of a shared library or object
/// file, bounded by its symbol's size and its section, if it has one
/// (where the format records no size, by its section: the blob's own
/// header says how long it is).
pub fn embedded_library_bin(data: &[u8]) -> Result<Option<&[u8]>> {
    let file = parse(data)?;
    let Some(sym) = defined(&file).into_iter().find(|s| s.name == LIBRARY_BIN) else {
        return Ok(None);
    };
    let section = sym.section.and_then(|i| file.section_by_index(i).ok());
    let Some(section) = section else {
        return Err(Error::value(format!(
            "{LIBRARY_BIN} lies outside its section"
        )));
    };
    let bytes = section
        .data()
        .map_err(|e| Error::value(format!("unreadable section of {LIBRARY_BIN}: {e}")))?;
    let start = sym
        .address
        .checked_sub(section.address())
        .and_then(|s| usize::try_from(s).ok());
    let slice = start.and_then(|s| {
        let rest = bytes.get(s..)?;
        match usize::try_from(sym.size).ok()? {
            0 => Some(rest),
            n => rest.get(..n),
        }
    });
    slice
        .map(Some)
        .ok_or_else(|| Error::value(format!("{LIBRARY_BIN} lies outside its section")))
}

/// The `__tvm_ffi__cubin_<name>` / `_end` symbol pairs, sorted by name.
fn cubins(file: &object::File<'_>) -> Vec<(String, u64)> {
    let mut starts = std::collections::BTreeMap::new();
    let mut ends = std::collections::BTreeMap::new();
    for sym in file.dynamic_symbols().chain(file.symbols()) {
        let Some(name) = sym.name().ok().and_then(|n| n.strip_prefix(CUBIN_PREFIX)) else {
            continue;
        };
        match name.strip_suffix("_end") {
            Some(base) => ends.insert(base.to_owned(), sym.address()),
            None => starts.insert(name.to_owned(), sym.address()),
        };
    }
    starts
        .into_iter()
        .filter_map(|(name, start)| Some((name.clone(), ends.get(&name)?.checked_sub(start)?)))
        .collect()
}

fn parse(data: &[u8]) -> Result<object::File<'_>> {
    object::File::parse(data).map_err(|e| Error::value(format!("not an object file: {e}")))
}

/// The data objects a shared library defines whose names start with
/// `prefix`, with their sizes, sorted by name (where the loader cannot list
/// a mapped image's, it reads them here: its context slots).
pub fn data_objects(data: &[u8], prefix: &str) -> Result<Vec<(String, usize)>> {
    let file = parse(data)?;
    let mut out: Vec<(String, usize)> = defined(&file)
        .into_iter()
        .filter(|s| !s.code && s.name.starts_with(prefix))
        .map(|s| {
            (
                s.name.to_owned(),
                usize::try_from(s.size).unwrap_or(usize::MAX),
            )
        })
        .collect();
    out.sort_unstable();
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// One summary per module of a decoded tree.
pub fn summarize(tree: &library_bin::LibraryBin<'_>) -> Vec<ModuleSummary> {
    tree.modules
        .iter()
        .zip(&tree.imports)
        .map(|(m, imports)| ModuleSummary {
            kind: String::from_utf8_lossy(m.kind).into_owned(),
            size: if m.kind == LIB_KIND {
                0
            } else {
                m.payload.map_or(0, <[u8]>::len)
            },
            imports: imports.clone(),
            detail: match (m.kind, m.payload) {
                (b"cuda", Some(p)) => super::device_code::describe_cuda_blob(p),
                _ => Vec::new(),
            },
        })
        .collect()
}

/// Inspects a shared library or relocatable object file.
pub fn inspect(data: &[u8]) -> Result<Inspection> {
    let file = parse(data)?;
    let mut out = Inspection::default();
    for sym in defined(&file) {
        if let Some(f) = sym.name.strip_prefix(FUNCTION_PREFIX)
            && !f.starts_with('_')
            && sym.code
        {
            out.functions.push(f.to_string());
        }
    }
    // A function appears in several tables: sorted, then deduplicated
    // (linear after the sort, where a search per symbol was quadratic).
    out.functions.sort_unstable();
    out.functions.dedup();
    out.cubins = cubins(&file);
    if let Some(blob) = embedded_library_bin(data)? {
        let tree = library_bin::parse(blob)?;
        out.library_bin = Some(summarize(&tree));
    }
    Ok(out)
}
