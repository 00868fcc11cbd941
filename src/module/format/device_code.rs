//! Device code as compilers hand it over, read without a GPU: which format
//! the bytes are (sniffed, never taken from a label: TVM tags a fatbin
//! `cubin`), and which kernels they define with how many parameter bytes.
//!
//! - cubin: an ELF file; kernels are its `FUNC` symbols marked as entries
//!   (`st_other` bit `0x10`), their parameters the `KPARAM_INFO`
//!   attributes of `.nv.info.<kernel>`.
//! - fatbin: magic `0xBA55ED50`, then entries (PTX or ELF, for one
//!   architecture each), possibly compressed; uncompressed ELF entries are
//!   read as cubins, PTX entries as PTX.
//! - PTX: text with `.version` and `.target`; kernels are `.entry`
//!   declarations (a `.func` is a device function no runtime can launch).
//! - CUDA C source: text with `__global__` functions, compiled at load.
#![forbid(unsafe_code)]

use crate::module::format::cuda_blob::{self, ArgKind, FunctionInfo};
use crate::runtime::model::error::{Error, Result};
use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::HashMap;

/// The format of device code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeFormat {
    /// An ELF cubin.
    Cubin,
    /// A fat binary.
    Fatbin,
    /// PTX assembly text.
    Ptx,
    /// CUDA C++ source.
    CudaSource,
}

impl CodeFormat {
    /// The name TVM would record for it.
    pub fn name(self) -> &'static str {
        match self {
            CodeFormat::Cubin => "cubin",
            CodeFormat::Fatbin => "fatbin",
            CodeFormat::Ptx => "ptx",
            CodeFormat::CudaSource => "cuda",
        }
    }
}

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FATBIN_COMPRESSED: u64 = 0x2000;
const STO_CUDA_ENTRY: u8 = 0x10;
const EIATTR_KPARAM_INFO: u8 = 0x17;

/// What `code` is; bytes that are none of the formats are an error that
/// shows how they start.
pub fn sniff(code: &[u8]) -> Result<CodeFormat> {
    if code.starts_with(b"\x7fELF") {
        return Ok(CodeFormat::Cubin);
    }
    if code.len() >= 4 && u32::from_le_bytes(code[..4].try_into().expect("4")) == FATBIN_MAGIC {
        return Ok(CodeFormat::Fatbin);
    }
    // Read as bytes: text damaged anywhere (bytes that are not UTF-8) is
    // still the format it says it is, and the driver or NVRTC says what is
    // wrong with it.
    if has_directive(code, b".version") && has_directive(code, b".target") {
        return Ok(CodeFormat::Ptx);
    }
    if code.windows(10).any(|w| w == b"__global__") {
        return Ok(CodeFormat::CudaSource);
    }
    let head: String = code
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ");
    Err(Error::value(format!(
        "device code of {} bytes is none of cubin (ELF), fatbin, PTX or CUDA source; it starts {head}",
        code.len()
    )))
}

/// `code` as text, without a trailing NUL terminator (bytes that are not
/// UTF-8 read as U+FFFD).
fn text_of(code: &[u8]) -> std::borrow::Cow<'_, str> {
    let end = code.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    String::from_utf8_lossy(&code[..end])
}

/// Whether a line of `code` starts with `directive` (after whitespace or
/// NUL bytes).
fn has_directive(code: &[u8], directive: &[u8]) -> bool {
    code.split(|&b| b == b'\n').any(|l| {
        let start = l.iter().position(|&b| b != 0 && !b.is_ascii_whitespace());
        start.is_some_and(|i| l[i..].starts_with(directive))
    })
}

/// How a kernel symbol is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A launchable entry (`.entry`, `__global__`, an ELF entry symbol).
    Entry,
    /// A device function (`.func`): not launchable.
    DeviceFunction,
}

/// A kernel (or device function) the code defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSymbol {
    /// Its name.
    pub name: String,
    /// Entry or device function.
    pub kind: SymbolKind,
    /// The sizes of its parameters in bytes, in order, where the code says.
    pub param_sizes: Option<Vec<usize>>,
}

/// The symbols of device code, for one format, with a note when part of
/// the code could not be read (a compressed fatbin entry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// The kernels found (a fatbin lists each name once).
    pub kernels: Vec<KernelSymbol>,
    /// What could not be read.
    pub notes: Vec<String>,
    /// Where each name is in `kernels`.
    index: HashMap<String, usize>,
}

impl Listing {
    fn add(&mut self, k: KernelSymbol) {
        match self.index.get(&k.name) {
            Some(&i) => {
                let old = &mut self.kernels[i];
                if old.param_sizes.is_none() {
                    old.param_sizes = k.param_sizes;
                }
            }
            None => {
                self.index.insert(k.name.clone(), self.kernels.len());
                self.kernels.push(k);
            }
        }
    }
    /// The symbol named `name`.
    pub fn find(&self, name: &str) -> Option<&KernelSymbol> {
        self.index.get(name).map(|&i| &self.kernels[i])
    }
}

/// The kernels `code` defines.
pub fn list(code: &[u8]) -> Result<Listing> {
    let mut out = Listing::default();
    match sniff(code)? {
        CodeFormat::Cubin => list_cubin(code, &mut out)?,
        CodeFormat::Fatbin => list_fatbin(code, &mut out)?,
        CodeFormat::Ptx => list_ptx(&text_of(code), &mut out),
        CodeFormat::CudaSource => list_source(&text_of(code), &mut out),
    }
    Ok(out)
}

fn list_cubin(code: &[u8], out: &mut Listing) -> Result<()> {
    let file = object::read::elf::ElfFile64::<object::Endianness>::parse(code)
        .map_err(|e| Error::value(format!("cubin: not a readable 64-bit ELF file: {e}")))?;
    // Each kernel's `.nv.info.<name>` section, by name: one pass.
    let infos: HashMap<&str, &[u8]> = file
        .sections()
        .filter_map(|s| {
            let name = s.name().ok()?.strip_prefix(".nv.info.")?;
            Some((name, s.data().ok()?))
        })
        .collect();
    for sym in file.symbols() {
        let object::SymbolFlags::Elf { st_info, st_other } = sym.flags() else {
            continue;
        };
        if st_info.st_type() != object::elf::STT_FUNC || !sym.is_definition() {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        let kind = if st_other.0 & STO_CUDA_ENTRY != 0 {
            SymbolKind::Entry
        } else {
            SymbolKind::DeviceFunction
        };
        let param_sizes = infos.get(name).and_then(|info| kparam_sizes(info));
        out.add(KernelSymbol {
            name: name.to_owned(),
            kind,
            param_sizes,
        });
    }
    Ok(())
}

/// The parameter sizes recorded in a `.nv.info.<kernel>` section
/// (`KPARAM_INFO`: ordinal at +4, size in bits 18..32 of the word at +8).
fn kparam_sizes(info: &[u8]) -> Option<Vec<usize>> {
    let mut params: Vec<(u16, usize)> = Vec::new();
    let mut pos = 0usize;
    while pos + 4 <= info.len() {
        let (fmt, attr) = (info[pos], info[pos + 1]);
        let len = match fmt {
            1..=3 => 4,
            4 => 4 + usize::from(u16::from_le_bytes([info[pos + 2], info[pos + 3]])),
            _ => return None,
        };
        let value = info.get(pos + 4..pos + len)?;
        if fmt == 4 && attr == EIATTR_KPARAM_INFO && value.len() >= 12 {
            let ordinal = u16::from_le_bytes([value[4], value[5]]);
            let word = u32::from_le_bytes(value[8..12].try_into().ok()?);
            params.push((ordinal, ((word >> 18) & 0x3fff) as usize));
        }
        pos += len;
    }
    params.sort();
    Some(params.into_iter().map(|(_, size)| size).collect())
}

fn list_fatbin(code: &[u8], out: &mut Listing) -> Result<()> {
    let read_u64 = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(code.get(at..at + 8)?.try_into().ok()?))
    };
    let read_u32 = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(code.get(at..at + 4)?.try_into().ok()?))
    };
    let cut = |what: &str| Error::value(format!("fatbin cut short: {what}"));
    let header = usize::from(u16::from_le_bytes([
        *code.get(6).ok_or_else(|| cut("header"))?,
        *code.get(7).ok_or_else(|| cut("header"))?,
    ]));
    let size = read_u64(8).ok_or_else(|| cut("header"))?;
    let end = header
        .checked_add(usize::try_from(size).unwrap_or(usize::MAX))
        .filter(|&e| e <= code.len())
        .ok_or_else(|| cut(&format!("it claims {size} bytes of entries")))?;
    let mut pos = header;
    while pos < end {
        let kind = u16::from_le_bytes([code[pos], *code.get(pos + 1).ok_or_else(|| cut("entry"))?]);
        let entry_header = read_u32(pos + 4).ok_or_else(|| cut("entry"))? as usize;
        let payload = read_u64(pos + 8).ok_or_else(|| cut("entry"))?;
        let arch = read_u32(pos + 28).ok_or_else(|| cut("entry"))?;
        let flags = read_u64(pos + 40).ok_or_else(|| cut("entry"))?;
        let start = pos
            .checked_add(entry_header)
            .ok_or_else(|| cut("entry header"))?;
        let stop = start
            .checked_add(usize::try_from(payload).unwrap_or(usize::MAX))
            .filter(|&s| s <= end)
            .ok_or_else(|| cut(&format!("an entry claims {payload} bytes")))?;
        let bytes = &code[start..stop];
        if flags & FATBIN_COMPRESSED != 0 {
            out.notes.push(format!(
                "sm_{arch} entry compressed: its kernels are not listed"
            ));
        } else if kind == 2 {
            list_cubin(bytes, out)?;
        } else if kind == 1 {
            list_ptx(&text_of(bytes), out);
        }
        if stop == pos {
            break;
        }
        pos = stop;
    }
    Ok(())
}

/// PTX `.entry` and `.func` declarations with their `.param` sizes. One
/// pass finds the declarations; each is read only up to the next one, so
/// the work is linear in the text, whatever it holds.
fn list_ptx(text: &str, out: &mut Listing) {
    let decls = ptx_declarations(text);
    for (i, &(kind, after)) in decls.iter().enumerate() {
        let end = decls.get(i + 1).map_or(text.len(), |&(_, next)| next);
        let mut decl = &text[after..end.max(after)];
        // `.func (.reg .b32 ret) name(` declares a return value first.
        if kind == SymbolKind::DeviceFunction
            && decl.starts_with('(')
            && let Some(close) = decl.find(')')
        {
            decl = decl[close + 1..].trim_start();
        }
        let name_end = decl
            .find(|c: char| c == '(' || c.is_whitespace())
            .unwrap_or(decl.len());
        let name = decl[..name_end].trim().to_owned();
        let param_sizes = match (decl.find('('), decl.find(')')) {
            (Some(s), Some(e)) if s < e && kind == SymbolKind::Entry => Some(
                decl[s + 1..e]
                    .split(',')
                    .filter_map(ptx_param_size)
                    .collect(),
            ),
            _ => None,
        };
        if !name.is_empty() {
            out.add(KernelSymbol {
                name,
                kind,
                param_sizes,
            });
        }
    }
}

/// Every `.entry` and `.func` declaration of PTX text, in order: its kind
/// and the offset of what follows the keyword (whitespace skipped). A
/// keyword counts where the words before it on its line are all
/// directives (`.visible`, `.weak`).
fn ptx_declarations(text: &str) -> Vec<(SymbolKind, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    // Whether every word of the line so far is a directive, kept as the
    // scan goes (never read back): one pass.
    let mut directives_only = true;
    let mut pos = 0usize;
    while pos < bytes.len() {
        let b = bytes[pos];
        if b == b'\n' {
            directives_only = true;
        } else if !b.is_ascii_whitespace() && (pos == 0 || bytes[pos - 1].is_ascii_whitespace()) {
            // A word starts here.
            let rest = &text[pos..];
            let found = [
                (".entry", SymbolKind::Entry),
                (".func", SymbolKind::DeviceFunction),
            ]
            .into_iter()
            .find(|(kw, _)| {
                rest.starts_with(kw) && rest[kw.len()..].starts_with(|c: char| c.is_whitespace())
            });
            match found {
                Some((kw, kind)) if directives_only => {
                    let after = pos + kw.len();
                    let skipped = text[after..].len() - text[after..].trim_start().len();
                    out.push((kind, after + skipped));
                    pos = after;
                    continue;
                }
                _ => directives_only &= b == b'.',
            }
        }
        pos += 1;
    }
    out
}

/// The size of one `.param .u64 name` (or `.param .align 8 .b8 name[16]`).
fn ptx_param_size(param: &str) -> Option<usize> {
    let words: Vec<&str> = param.split_whitespace().collect();
    if words.first() != Some(&".param") {
        return None;
    }
    let ty = words.iter().find(|w| {
        let w = w.trim_start_matches('.');
        w.len() >= 2
            && matches!(w.as_bytes()[0], b'u' | b's' | b'b' | b'f')
            && w[1..].parse::<usize>().is_ok()
    })?;
    let bits: usize = ty.trim_start_matches('.')[1..].parse().ok()?;
    let count = words
        .last()
        .and_then(|n| n.split_once('['))
        .and_then(|(_, c)| c.trim_end_matches(']').parse::<usize>().ok())
        .unwrap_or(1);
    Some(bits / 8 * count)
}

/// `__global__` functions of CUDA source: their names and parameter count
/// (sizes are not known before compiling). Each declaration is read only up
/// to the next `__global__`, so the work is linear in the text.
fn list_source(text: &str, out: &mut Listing) {
    const GLOBAL: &str = "__global__";
    let starts: Vec<usize> = text.match_indices(GLOBAL).map(|(i, _)| i).collect();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let decl = &text[start + GLOBAL.len()..end];
        let Some(open) = decl.find('(') else { continue };
        // `__launch_bounds__(N)` comes before the name.
        let name_part = if decl[..open].trim_end().ends_with("__launch_bounds__") {
            let close = decl[open..].find(')').map_or(decl.len(), |c| open + c + 1);
            let next = decl[close..].find('(').map_or(decl.len(), |c| close + c);
            &decl[close..next]
        } else {
            &decl[..open]
        };
        let name = name_part.split_whitespace().last().unwrap_or("").to_owned();
        if !name.is_empty() && out.find(&name).is_none() {
            out.add(KernelSymbol {
                name,
                kind: SymbolKind::Entry,
                param_sizes: None,
            });
        }
    }
}

/// Checks kernel `info` (whose arguments reach the driver as `kinds`)
/// against what `listing`, the code of `format`, declares: an entry of that
/// name whose parameter sizes match. Code that could not be read wholly (a
/// compressed fatbin entry) is not held against the table.
pub fn check_kernel(
    listing: &Listing,
    format: CodeFormat,
    info: &FunctionInfo,
    kinds: &[ArgKind],
) -> core::result::Result<(), String> {
    let Some(sym) = listing.find(&info.name) else {
        if !listing.notes.is_empty() {
            return Ok(());
        }
        return Err(format!(
            "kernel {}: the {} code defines no such kernel",
            info.name,
            format.name()
        ));
    };
    if sym.kind == SymbolKind::DeviceFunction {
        return Err(format!(
            "kernel {}: the {} code declares it a device function (.func), not a kernel entry \
             (.entry): no runtime can launch it",
            info.name,
            format.name()
        ));
    }
    if let Some(sizes) = &sym.param_sizes {
        let table: Vec<usize> = kinds.iter().map(|k| k.param_size()).collect();
        if *sizes != table {
            return Err(format!(
                "kernel {}: the {} code declares parameters of {sizes:?} bytes, the function \
                 table {table:?}",
                info.name,
                format.name()
            ));
        }
    }
    Ok(())
}

/// Describes a serialized CUDA module, one line each: the code (its
/// sniffed format, TVM's label when it differs, its size), then every
/// kernel's packed-call signature and whether the code agrees with it.
pub fn describe_cuda_blob(bytes: &[u8]) -> Vec<String> {
    let blob = match cuda_blob::decode(bytes) {
        Ok(b) => b,
        Err(e) => return vec![format!("unreadable: {e}")],
    };
    let (format, listing) = match sniff(&blob.code).and_then(|f| Ok((f, list(&blob.code)?))) {
        Ok(x) => x,
        Err(e) => return vec![format!("code of {} bytes: {e}", blob.code.len())],
    };
    let label = if blob.fmt == format.name() {
        String::new()
    } else {
        format!(" (recorded as {:?})", blob.fmt)
    };
    let shown = match format {
        CodeFormat::CudaSource => "CUDA source (compiled with NVRTC at first use)",
        other => other.name(),
    };
    let mut out = vec![format!(
        "code: {shown}{label}, {} bytes, {} kernel(s)",
        blob.code.len(),
        blob.functions.len()
    )];
    out.extend(listing.notes.iter().map(|n| format!("note: {n}")));
    for (_, info) in &blob.functions {
        let checked = info
            .arg_kinds()
            .map_err(|e| e.to_string())
            .and_then(|kinds| check_kernel(&listing, format, info, &kinds));
        let signature = info.signature().unwrap_or_else(|e| e.to_string());
        out.push(match checked {
            Ok(()) => format!("kernel {signature}"),
            Err(e) => format!("kernel {signature}: MISMATCH: {e}"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//\n.version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u32 k_param_1\n)\n{\n\tret;\n}\n\
        .visible .func (.param .b32 r) helper(\n\t.param .b64 p\n)\n{\n\tret;\n}\n";

    #[test]
    fn ptx_entries_and_functions() {
        let mut code = PTX.as_bytes().to_vec();
        code.push(0);
        assert_eq!(sniff(&code).unwrap(), CodeFormat::Ptx);
        let l = list(&code).unwrap();
        assert_eq!(l.kernels.len(), 2);
        assert_eq!(l.find("k").unwrap().param_sizes, Some(vec![8, 4]));
        assert_eq!(l.find("helper").unwrap().kind, SymbolKind::DeviceFunction);
    }

    #[test]
    fn damaged_ptx_is_still_ptx() {
        let mut damaged = PTX.as_bytes().to_vec();
        let middle = damaged.len() / 2;
        damaged[middle..middle + 3].copy_from_slice(&[0xff, 0xfe, 0x80]);
        assert_eq!(sniff(&damaged).unwrap(), CodeFormat::Ptx);
        assert_eq!(
            list(&damaged).unwrap().find("k").unwrap().kind,
            SymbolKind::Entry
        );
        let mut zeroed = PTX.as_bytes().to_vec();
        zeroed[..3].fill(0);
        assert_eq!(sniff(&zeroed).unwrap(), CodeFormat::Ptx);
    }

    #[test]
    fn source_kernels() {
        let src = "extern \"C\" __global__ void __launch_bounds__(64) scale(float* a, int n) {}\n\
                   extern \"C\" __global__ void plain(float* a) {}\n";
        assert_eq!(sniff(src.as_bytes()).unwrap(), CodeFormat::CudaSource);
        let l = list(src.as_bytes()).unwrap();
        let names: Vec<&str> = l.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["scale", "plain"]);
    }

    #[test]
    fn garbage_and_hostile_fatbins() {
        let e = sniff(b"\x01\x02garbage").unwrap_err().to_string();
        assert!(e.contains("starts 01 02 67"), "{e}");
        let mut fat = FATBIN_MAGIC.to_le_bytes().to_vec();
        fat.extend_from_slice(&[1, 0, 16, 0]);
        fat.extend_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(
            list(&fat)
                .unwrap_err()
                .to_string()
                .contains("claims 1099511627776")
        );
        for n in 0..fat.len() {
            let _ = list(&fat[..n]);
        }
    }
}
