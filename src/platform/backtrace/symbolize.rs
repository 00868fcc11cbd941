//! The function, file and line of a code address, from the debug
//! information of the loaded object that holds it (DWARF, else its symbol
//! table), read with `addr2line`.
//!
//! Objects are found when an address is resolved, so libraries loaded after
//! the first backtrace are symbolized too (the `backtrace` crate lists the
//! loaded objects once per process and never again), and
//! [`forget_objects`] drops what was read once libraries are unloaded, so
//! an address is never resolved through an unloaded library's information.
//! An object that is stripped, or whose compressed sections claim more than
//! their bytes can expand to, is not read at all ([`symbols_only`]).

use std::path::PathBuf;
use std::sync::Mutex;

/// One function a code address is in (an address inside inlined code is in
/// several, innermost first).
pub struct Symbol {
    /// The name as the object spells it (mangled for C++ and Rust).
    pub raw_name: Option<Vec<u8>>,
    /// The source file, if the debug information says.
    pub file: Option<String>,
    /// The source line, 0 if unknown.
    pub line: u32,
}

/// A loaded object: where its segments lie (`bias` added to the addresses
/// its file states), its path, whether it is named by its dynamic symbols
/// only, and its debug information once read.
struct Object {
    bias: usize,
    ranges: Vec<core::ops::Range<usize>>,
    path: PathBuf,
    symbols_only: bool,
    loader: Option<Option<Box<addr2line::Loader>>>,
}

/// The most a compressed section may claim to expand to per byte: zlib's
/// and zstd's best ratios are about 1,032 to 1, plus a little for tiny
/// sections.
const MAX_EXPANSION: u64 = 1032;

/// Whether the object file at `path` is to be named by its dynamic symbols
/// only, with no file and line: it is stripped (neither a symbol table,
/// `.symtab`, nor debug information, `.debug_info` compressed or not, of
/// its own: its separate debug file, `libc6-dbg` say, is not read, which
/// would make a first backtrace take tens of milliseconds), or a compressed
/// section claims more than its bytes can expand to (a hostile or corrupt
/// library: a reader would allocate what it claims, 1 TiB, say). Read from
/// its section headers; a file that cannot be read counts as not stripped.
fn names_only(path: &std::path::Path) -> bool {
    use object::{Object as _, ObjectSection};
    std::fs::File::open(path).ok().is_some_and(|file| {
        let cache = object::ReadCache::new(file);
        object::File::parse(&cache).is_ok_and(|o| {
            let no_debug = !o
                .sections()
                .any(|s| matches!(s.name(), Ok(".symtab" | ".debug_info" | ".zdebug_info")));
            let inflated = o.sections().any(|s| {
                s.compressed_file_range().is_ok_and(|r| {
                    r.format != object::CompressionFormat::None
                        && r.uncompressed_size
                            > r.compressed_size.saturating_mul(MAX_EXPANSION) + 4096
                })
            });
            no_debug || inflated
        })
    })
}

/// Objects read so far, most recently used first; at most [`MAX_OBJECTS`].
static OBJECTS: Mutex<Vec<Object>> = Mutex::new(Vec::new());
const MAX_OBJECTS: usize = 16;

/// Forgets every object read: called when libraries were unloaded, as one
/// may now sit where another was.
pub fn forget_objects() {
    OBJECTS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// Runs `f` on the object holding `addr` (read on first use, then kept
/// most recently used first).
fn with_object<T>(addr: usize, f: impl FnOnce(&mut Object) -> T) -> Option<T> {
    let mut objects = OBJECTS.lock().unwrap_or_else(|e| e.into_inner());
    let at = objects
        .iter()
        .position(|o| o.ranges.iter().any(|r| r.contains(&addr)));
    let mut object = match at {
        Some(i) => objects.remove(i),
        None => {
            let (bias, ranges, path) = crate::platform::image::object_holding(addr)?;
            if objects.len() >= MAX_OBJECTS {
                objects.pop();
            }
            Object {
                bias,
                ranges,
                symbols_only: names_only(&path),
                path,
                loader: None,
            }
        }
    };
    let out = f(&mut object);
    objects.insert(0, object);
    Some(out)
}

/// Whether the object holding `addr` is named by its dynamic symbols only
/// (see [`names_only`]); false when no object holds it.
pub fn symbols_only(addr: usize) -> bool {
    with_object(addr, |o| o.symbols_only).unwrap_or(false)
}

/// The functions `addr` is in, innermost first: from DWARF where the
/// object has it (names, files and lines, inlined frames included), else
/// the symbol table's name. Empty when nothing names it. The object's
/// debug information is read on first use (the reader is not shared
/// between threads: resolutions take turns).
pub fn resolve(addr: usize) -> Vec<Symbol> {
    with_object(addr, |o| {
        let symbols_only = o.symbols_only;
        let path = &o.path;
        let loader = o.loader.get_or_insert_with(|| {
            (!symbols_only)
                .then(|| addr2line::Loader::new(path).ok().map(Box::new))
                .flatten()
        });
        loader
            .as_deref()
            .map_or_else(Vec::new, |l| frames(l, addr.wrapping_sub(o.bias) as u64))
    })
    .unwrap_or_default()
}

/// The functions at `probe` (an address as the file states it) in `loader`.
fn frames(loader: &addr2line::Loader, probe: u64) -> Vec<Symbol> {
    let mut out = Vec::new();
    if let Ok(mut frames) = loader.find_frames(probe) {
        while let Ok(Some(frame)) = frames.next() {
            let raw_name = frame
                .function
                .as_ref()
                .and_then(|f| f.raw_name().ok())
                .map(|n| n.as_bytes().to_vec());
            let (file, line) = frame.location.map_or((None, 0), |l| {
                (l.file.map(str::to_string), l.line.unwrap_or(0))
            });
            out.push(Symbol {
                raw_name,
                file,
                line,
            });
        }
    }
    if out.iter().all(|s| s.raw_name.is_none())
        && let Some(name) = loader.find_symbol(probe)
    {
        let (file, line) = out.first().map_or((None, 0), |s| (s.file.clone(), s.line));
        out = vec![Symbol {
            raw_name: Some(name.as_bytes().to_vec()),
            file,
            line,
        }];
    }
    out
}
