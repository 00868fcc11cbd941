//! Backtraces in the format frontends parse:
//! `  File "<file>", line <n>, in <func>` lines, newest frame first.
//!
//! Two captures:
//! - [`capture`] walks the stack and resolves every frame from debug
//!   information (file and line): `TVMFFIBacktrace`, and errors raised from
//!   C strings when `TVM_FFI_ERROR_BACKTRACE=1`;
//! - [`capture_on_raise`], the default for errors raised from C strings:
//!   the stack's return addresses are taken on raise, and each address is
//!   named once, from the dynamic symbol table (`dladdr`: module and
//!   function), then remembered, so a raise site met again costs the walk
//!   and a lookup per frame. Nothing is loaded on first use (the
//!   reference's first backtrace parses debug information for about a
//!   quarter of a second). `TVM_FFI_ERROR_BACKTRACE=0` turns it off.

mod symbolize;
// Per system: `unwind.rs`, the remembering frame walk of x86-64 Linux;
// `elsewhere.rs`, none (the walk is `_Unwind_Backtrace`'s).
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[path = "elsewhere.rs"]
mod unwind;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod unwind;

use crate::platform::image;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::{Arc, LazyLock, Mutex};

/// Frames whose symbol starts with one of these are the FFI boundary: the
/// walk stops there unless asked to cross it.
const BOUNDARY_SYMBOLS: &[&str] = &[
    "TVMFFIFunctionCall",
    "slot_tp_call",
    "object_is_not_callable",
    "_Py",
    "PyObject",
];

/// Frames left out by symbol prefix: the C++ function machinery and the
/// capture entry points (the reference's list).
const EXCLUDED_SYMBOLS: &[&str] = &[
    "tvm::ffi::Function",
    "tvm::ffi::detail::",
    "TVMFFIBacktrace",
    "TVMFFIErrorSetRaisedFromCStr",
    "__libc_",
    "ffi_call_",
];

/// Frames left out by file: the official C++ headers' plumbing and the C++
/// standard library.
const EXCLUDED_FILES: &[&str] = &[
    "include/tvm/ffi/error.h",
    "include/tvm/ffi/function_detail.h",
    "include/tvm/ffi/function.h",
    "include/tvm/ffi/any.h",
    "include/c++/",
];

/// The load address of the object containing `addr`, if any.
fn object_base(addr: usize) -> Option<usize> {
    image::symbol_at(addr).map(|s| s.base).filter(|&b| b != 0)
}

/// The base of this library: its own frames (the capture, the Rust
/// runtime linked into it) never appear in backtraces.
static OWN_BASE: LazyLock<Option<usize>> =
    LazyLock::new(|| object_base(capture as *const () as usize));

type CxaDemangle = unsafe extern "C" fn(
    *const core::ffi::c_char,
    *mut core::ffi::c_char,
    *mut usize,
    *mut core::ffi::c_int,
) -> *mut core::ffi::c_char;

/// libstdc++'s `__cxa_demangle` when the process has it (every C++ host):
/// C++ frames then read exactly as the reference prints them.
/// (Windows has no process-wide symbol lookup: Rust's demangler names
/// them there.) Looked up unlocked: the lookup takes the system loader's
/// lock.
fn cxa_demangle() -> Option<CxaDemangle> {
    static FOUND: std::sync::OnceLock<Option<CxaDemangle>> = std::sync::OnceLock::new();
    crate::platform::unlocked_once::get_or_make(&FOUND, || {
        let f = image::process_symbol(c"__cxa_demangle")?;
        // SAFETY: `__cxa_demangle` has this signature (Itanium C++ ABI).
        Some(unsafe { core::mem::transmute::<*mut core::ffi::c_void, CxaDemangle>(f) })
    })
}

/// A mangled name made readable: C++ names (`_Z...`) through the process's
/// `__cxa_demangle`, exactly as the reference prints them, others (Rust
/// names) as the `backtrace` crate demangles them.
fn readable(raw: &[u8]) -> String {
    if raw.starts_with(b"_Z")
        && let (Some(demangle), Ok(c)) = (cxa_demangle(), std::ffi::CString::new(raw))
    {
        let mut status = 0;
        // SAFETY: a NUL-terminated input; NULL buffer asks for a malloc'd result.
        let out = unsafe {
            demangle(
                c.as_ptr(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                &mut status,
            )
        };
        if !out.is_null() {
            // SAFETY: a NUL-terminated string malloc'd by __cxa_demangle.
            let text = unsafe { std::ffi::CStr::from_ptr(out) }
                .to_string_lossy()
                .into_owned();
            // SAFETY: we own the buffer.
            unsafe { libc::free(out.cast()) };
            if status == 0 {
                return text;
            }
        }
    }
    backtrace::SymbolName::new(raw).to_string()
}

/// The most frames `TVM_TRACEBACK_LIMIT` may ask for: a walk this deep
/// needs 1 MiB of return addresses; a larger value (10^12, say) is taken as
/// this, not as an allocation of 16 bytes per claimed frame.
const MAX_LIMIT: usize = 1 << 16;

/// The most frames written (`TVM_TRACEBACK_LIMIT`, default 512, at most
/// [`MAX_LIMIT`]).
static LIMIT: LazyLock<usize> = LazyLock::new(|| {
    std::env::var("TVM_TRACEBACK_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<u128>().ok())
        .map_or(512, |n| {
            usize::try_from(n).unwrap_or(MAX_LIMIT).min(MAX_LIMIT)
        })
});

/// The dynamic loader's counts of objects loaded and unloaded so far, as
/// last seen by [`forget_if_remapped`].
static LOADER_COUNTS: Mutex<Option<(u64, u64)>> = Mutex::new(None);

/// Forgets every cache keyed by code address (frame names, resolved
/// frames, unwind rules) when the dynamic loader has loaded or unloaded an
/// object since the last look, and the debug information read when one was
/// unloaded: an address may now belong to another library, mapped where an
/// unloaded one was (whose frames those entries would misname or, for
/// unwind rules, walk off the stack), or to a new one where nothing was.
/// One step of the loader's list per capture (where the loader counts).
fn forget_if_remapped() {
    let Some(now) = image::loader_counts() else {
        return;
    };
    let mut seen = LOADER_COUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(before) = seen.replace(now).filter(|&b| b != now) else {
        return;
    };
    drop(seen);
    NAMED.lock().unwrap_or_else(|e| e.into_inner()).clear();
    RESOLVED.lock().unwrap_or_else(|e| e.into_inner()).clear();
    unwind::forget_rules();
    // Debug information already read stays valid until an object is
    // unloaded (one may then be mapped where it was).
    if before.1 != now.1 {
        symbolize::forget_objects();
    }
}

/// What errors raised from C strings record (`TVM_FFI_ERROR_BACKTRACE`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OnRaise {
    /// `0`: no backtrace.
    Off,
    /// Unset (or any other value): [`capture_on_raise`].
    Named,
    /// `1`: [`capture`], with files and lines from debug information.
    Full,
}

/// The setting for errors raised from C strings, read once.
pub static ON_RAISE: LazyLock<OnRaise> =
    LazyLock::new(
        || match std::env::var("TVM_FFI_ERROR_BACKTRACE").as_deref() {
            Ok("0") => OnRaise::Off,
            Ok("1") => OnRaise::Full,
            _ => OnRaise::Named,
        },
    );

/// What a return address stands for in a raise-time backtrace.
enum Frame {
    /// A line to show; whether a symbol named the function (else the line
    /// gives the offset in the module).
    Shown(Box<str>, bool),
    /// A frame left out (see [`excluded`]).
    Hidden,
    /// An FFI boundary: the walk stops.
    Boundary,
}

/// Return addresses named so far. Bounded: emptied when it reaches
/// [`MAX_NAMED`] addresses (a process raising from that many sites).
static NAMED: LazyLock<std::sync::Mutex<crate::platform::address_map::AddrMap<usize, Frame>>> =
    LazyLock::new(Default::default);
const MAX_NAMED: usize = 1 << 16;

/// The most frames a raise-time backtrace walks.
const MAX_RAISE_FRAMES: usize = 64;

/// Room for this library's own frames at the top of a walk (the capture,
/// the entry point, trampolines), which are left out.
const MAX_OWN_FRAMES: usize = 16;

/// The address range of this library's loaded segments: its frames (the
/// raise itself, the Rust runtime linked in) are never shown.
static OWN_RANGE: LazyLock<(usize, usize)> = LazyLock::new(|| {
    let Some(base) = *OWN_BASE else {
        return (0, 0);
    };
    (base, image::object_end(base).unwrap_or(base))
});

/// Loaded objects whose name tells nothing (`/proc/self/fd/N`), by that
/// name, with the file to show instead.
type ShownAs = HashMap<Box<[u8]>, Box<str>>;
static SHOWN_AS: LazyLock<Mutex<ShownAs>> = LazyLock::new(Default::default);

/// Shows frames of the object loaded as `loaded` as from `file` (the Unix
/// loader's route through a descriptor or a private copy names the file).
#[cfg(unix)]
pub fn show_file_as(loaded: &[u8], file: &[u8]) {
    SHOWN_AS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(loaded.into(), String::from_utf8_lossy(file).into());
}

/// Names a return address from the dynamic symbol table: the module as the
/// file (line 0), the function, or the offset in the module when no symbol
/// covers it (readable with `addr2line`).
fn name_frame(ip: usize) -> Frame {
    // The call instruction precedes the return address.
    let pc = ip.saturating_sub(1);
    let Some(image::AddressSymbol { file, base, symbol }) = image::symbol_at(pc) else {
        return Frame::Hidden;
    };
    let file = match file {
        None => "<unknown>".into(),
        Some(loaded) => {
            let shown = SHOWN_AS.lock().unwrap_or_else(|e| e.into_inner());
            shown.get(&*loaded).map_or_else(
                || String::from_utf8_lossy(&loaded).into_owned(),
                |f| f.to_string(),
            )
        }
    };
    let name = match &symbol {
        None => format!("{:#x}", pc - base),
        Some(raw) => readable(raw),
    };
    if BOUNDARY_SYMBOLS.iter().any(|b| name.starts_with(b)) {
        return Frame::Boundary;
    }
    if excluded(None, &name) {
        return Frame::Hidden;
    }
    let mut line = String::new();
    push_line(&mut line, &file, 0, &name);
    Frame::Shown(line.into_boxed_str(), symbol.is_some())
}

/// Fills `ips` with the return addresses of the calling stack, newest first;
/// answers how many. The remembering walk where it applies (`unwind`),
/// else `_Unwind_Backtrace`.
fn walk(ips: &mut [usize]) -> usize {
    if let Some(n) = unwind::return_addresses(ips) {
        return n;
    }
    let mut n = 0;
    // SAFETY: on Unix the unsynchronized walk is `_Unwind_Backtrace`, which
    // is thread-safe; the closure neither panics nor walks again.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips[n] = frame.ip() as usize;
            n += 1;
            n < ips.len()
        })
    };
    n
}

/// The backtrace of an error raised from C (see the module comment),
/// newest frame first, stopping at the FFI boundary.
pub fn capture_on_raise() -> String {
    forget_if_remapped();
    let (own_start, own_end) = *OWN_RANGE;
    let limit = (*LIMIT).min(MAX_RAISE_FRAMES);
    // Room for this library's own frames, which are left out.
    let mut ips = [0usize; MAX_RAISE_FRAMES + MAX_OWN_FRAMES];
    let walked = walk(&mut ips);
    // Frames of this library (the raise itself, trampolines) are left out.
    let mut n = 0;
    for i in 0..walked {
        if !(own_start..own_end).contains(&ips[i]) && n < limit {
            ips[n] = ips[i];
            n += 1;
        }
    }
    let mut out = String::new();
    let mut named = NAMED.lock().unwrap_or_else(|e| e.into_inner());
    if named.len() + n > MAX_NAMED {
        named.clear();
    }
    for &ip in &ips[..n] {
        match named.entry(ip).or_insert_with(|| name_frame(ip)) {
            Frame::Shown(line, ..) => out.push_str(line),
            Frame::Hidden => {}
            Frame::Boundary => break,
        }
    }
    out
}

fn push_line(out: &mut String, file: &str, line: u32, func: &str) {
    let _ = writeln!(out, "  File \"{file}\", line {line}, in {func}");
}

/// One symbol a code address resolves to (an address inside inlined code
/// resolves to several, innermost first).
struct Symbol {
    name: Box<str>,
    file: Option<Box<str>>,
    line: u32,
}

/// Return addresses resolved from debug information so far (each resolved
/// once: a backtrace from a site seen before parses nothing). Bounded as
/// [`NAMED`] is.
type Resolved = crate::platform::address_map::AddrMap<usize, Arc<[Symbol]>>;
static RESOLVED: LazyLock<Mutex<Resolved>> = LazyLock::new(Default::default);

/// The symbols of return address `ip`, from debug information.
fn resolve(ip: usize) -> Arc<[Symbol]> {
    symbolize::resolve(ip.saturating_sub(1))
        .into_iter()
        .map(|s| Symbol {
            name: s
                .raw_name
                .map_or_else(|| "<unknown>".into(), |raw| readable(&raw))
                .into(),
            file: s.file.map(Into::into),
            line: s.line,
        })
        .collect()
}

/// Captures the current stack, newest frame first. A given `file`/`func`
/// becomes the first line (the caller's own location) and stands for the
/// caller's frame, which the walk then skips. Unless `cross_boundary`, the
/// walk stops at the first FFI boundary frame. Frames of this library are
/// never shown. The stack is walked as for raise-time backtraces,
/// and each return address is resolved once per process.
pub fn capture(location: Option<(&str, u32, &str)>, cross_boundary: bool) -> String {
    forget_if_remapped();
    let mut out = String::with_capacity(256);
    let mut count = 0usize;
    let limit = *LIMIT;
    let mut skip_caller = location.is_some();
    if let Some((file, line, func)) = location
        && !excluded(Some(file), func)
    {
        push_line(&mut out, file, line, func);
        count += 1;
    }
    // This library's own frames come first (and are left out): room for
    // them. Most stacks fit the small buffer; a full one is walked again
    // into one as long as the limit asks.
    let mut small = [0usize; MAX_RAISE_FRAMES + MAX_OWN_FRAMES];
    let mut large = Vec::new();
    let mut walked = walk(&mut small);
    let mut ips = &small[..];
    let wanted = limit.saturating_add(MAX_OWN_FRAMES);
    if walked == small.len() && limit > MAX_RAISE_FRAMES && large.try_reserve_exact(wanted).is_ok()
    {
        large.resize(wanted, 0);
        walked = walk(&mut large);
        ips = &large;
    }
    let (own_start, own_end) = *OWN_RANGE;
    let own = *OWN_BASE;
    let foreign = ips[..walked].iter().copied().filter(|&ip| {
        if own_start < own_end {
            !(own_start..own_end).contains(&ip)
        } else {
            own.is_none() || object_base(ip) != own
        }
    });
    for ip in foreign {
        // The symbol table first (cheap, remembered): a boundary or a frame
        // left out needs no debug information, so the first backtrace of a
        // process parses none for them (libc's start-up frames, say, whose
        // separate debug file can take tens of milliseconds to read). The
        // caller's own frame is resolved as it is, as it may be inlined.
        if !skip_caller {
            let mut named = NAMED.lock().unwrap_or_else(|e| e.into_inner());
            if named.len() >= MAX_NAMED {
                named.clear();
            }
            let by_symbol = match named.entry(ip).or_insert_with(|| name_frame(ip)) {
                Frame::Boundary if !cross_boundary => return out,
                Frame::Boundary => None,
                Frame::Hidden => continue,
                Frame::Shown(line, named) => Some((line.clone(), *named)),
            };
            drop(named);
            // A stripped object (no symbol table, no debug information of
            // its own) is named by its dynamic symbols, all it has: its
            // separate debug file (`libc6-dbg`, say) is not read, which would
            // make a first backtrace take tens of milliseconds. A frame no
            // dynamic symbol names is left out, as one nothing names is.
            if let Some((line, named)) = by_symbol
                && symbolize::symbols_only(ip.saturating_sub(1))
            {
                if !named {
                    continue;
                }
                if count >= limit {
                    return out;
                }
                out.push_str(&line);
                count += 1;
                continue;
            }
        }
        if skip_caller && symbolize::symbols_only(ip.saturating_sub(1)) {
            // The caller's frame, in an object whose debug information is
            // not read: the given location stands for it.
            skip_caller = false;
            continue;
        }
        let symbols = {
            let resolved = RESOLVED.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(found) = resolved.get(&ip) {
                found.clone()
            } else {
                drop(resolved);
                let found = resolve(ip);
                let mut resolved = RESOLVED.lock().unwrap_or_else(|e| e.into_inner());
                if resolved.len() >= MAX_NAMED {
                    resolved.clear();
                }
                resolved.insert(ip, found.clone());
                found
            }
        };
        for symbol in symbols.iter() {
            if count >= limit {
                return out;
            }
            let name = &*symbol.name;
            if !cross_boundary && BOUNDARY_SYMBOLS.iter().any(|b| name.starts_with(b)) {
                return out;
            }
            if skip_caller {
                skip_caller = false;
                continue;
            }
            let file = symbol.file.as_deref();
            if excluded(file, name) {
                continue;
            }
            if file.is_none() && (name == "<unknown>" || name.starts_with("0x0")) {
                continue;
            }
            push_line(&mut out, file.unwrap_or("<unknown>"), symbol.line, name);
            count += 1;
        }
    }
    out
}

/// Whether a frame is left out (see [`EXCLUDED_SYMBOLS`], [`EXCLUDED_FILES`]).
fn excluded(file: Option<&str>, name: &str) -> bool {
    EXCLUDED_SYMBOLS.iter().any(|e| name.starts_with(e))
        || file.is_some_and(|f| EXCLUDED_FILES.iter().any(|e| f.contains(e)))
}
