//! `ffi.ReprPrint`: the text frontends show for `repr()` of values,
//! containers and reflected objects, in the reference's format (shared
//! sub-objects and cycles, the `__ffi_repr__` hook and per-field flags),
//! every part written once into one buffer.

use super::recursive::{elements, field_values, hook, text_of};
use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::StrAny;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::depth::{MAX_DEPTH, deep, too_deep};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::TextKind;
use crate::runtime::model::type_table::type_key_of;
use crate::runtime::reflect::reflected::kEnum;
use crate::runtime::value::map;
use crate::runtime::value::scalar::big_int_to_string;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The most text `ReprPrint` keeps for objects met again while printing
/// into a hook's own buffer (in the main buffer only positions are kept).
const REPR_CACHE_BYTES: usize = 64 << 20;

/// The text of an object printed before, to print again when met again.
enum Printed {
    /// Where it lies in the main output buffer.
    At(core::ops::Range<usize>),
    /// Its text, printed into a hook's buffer.
    Text(String),
}

#[derive(Default)]
struct ReprState {
    in_progress: HashSet<usize>,
    done: HashMap<usize, Printed>,
    /// The bytes of the texts in `done`.
    done_bytes: usize,
    show_addr: bool,
    /// Whether the value printed was composed from its parts (a container
    /// or reflected object) rather than printed directly.
    composed: bool,
}

/// `ffi.ReprPrint`. Addresses are shown when `TVM_FFI_REPR_WITH_ADDR=1`.
/// Also says whether the text was composed from the value's parts (the
/// reference returns those as heap strings). Every part is written once
/// into one buffer, so the cost is linear in the text: a 300,000-deep chain
/// copies no child's text into its parent's.
pub fn repr_print(value: AnyView<'_>) -> Result<(String, bool)> {
    let state = ReprState {
        show_addr: std::env::var("TVM_FFI_REPR_WITH_ADDR").is_ok_and(|v| v == "1"),
        ..ReprState::default()
    };
    let state = Arc::new(Mutex::new(state));
    let mut text = String::new();
    repr(&state, value, 0, &mut Out::main(&mut text))?;
    let composed = rlock(&state).composed;
    Ok((text, composed))
}

/// Where a repr is written: the main buffer (whose positions `done`
/// records) or a hook's own.
struct Out<'a> {
    text: &'a mut String,
    main: bool,
}

impl<'a> Out<'a> {
    fn main(text: &'a mut String) -> Self {
        Out { text, main: true }
    }
    fn hook(text: &'a mut String) -> Self {
        Out { text, main: false }
    }
}

fn rlock(state: &Mutex<ReprState>) -> std::sync::MutexGuard<'_, ReprState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name of a DLPack device type, as the reference prints it.
fn device_name(device_type: i32) -> &'static str {
    match device_type {
        1 => "cpu",
        2 => "cuda",
        3 => "cuda_host",
        4 => "opencl",
        7 => "vulkan",
        8 => "metal",
        9 => "vpi",
        10 => "rocm",
        11 => "rocm_host",
        12 => "ext_dev",
        13 => "cuda_managed",
        14 => "oneapi",
        15 => "webgpu",
        16 => "hexagon",
        17 => "maia",
        18 => "trn",
        _ => "unknown",
    }
}

fn device_text(d: DLDevice) -> String {
    format!("{}:{}", device_name(d.device_type), d.device_id)
}

/// A double as C++'s default stream formatting prints it (`%g`).
fn float_text(x: f64) -> String {
    crate::runtime::model::string::format_f64(c"%g", x)
}

/// A Python-style bytes literal, `b"..."`.
fn bytes_text(data: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &c in data {
        if (32..127).contains(&c) && c != b'"' && c != b'\\' {
            out.push(c as char);
        } else {
            out.push_str(&format!("\\x{c:02x}"));
        }
    }
    out.push('"');
    out
}

/// A Python-style quoted string (`EscapedStringPy` of the reference).
pub fn escaped_string(data: &[u8]) -> String {
    let mut out = String::from("\"");
    let n = data.len();
    let mut i = 0;
    while i < n {
        let c = data[i];
        let d = data.get(i + 1).copied().unwrap_or(0);
        if c == 0x1b && d == b'[' {
            let mut j = i + 2;
            while j < n && (data[j].is_ascii_digit() || data[j] == b';') {
                j += 1;
            }
            if j < n && (data[j] == b'm' || data[j] == b'K') {
                out.push_str("\\x1b[");
                out.push_str(&String::from_utf8_lossy(&data[i + 2..=j]));
                i = j + 1;
                continue;
            }
        }
        match c {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            c if c < 0x80 => {
                if c < 0x20 || c == 0x7f {
                    out.push_str(&format!("\\x{c:02x}"));
                } else {
                    out.push(c as char);
                }
            }
            _ => {
                let cont = |k: usize| data.get(i + k).is_some_and(|b| b & 0xC0 == 0x80);
                let (len, cp) = if c & 0xE0 == 0xC0 && i + 1 < n && cont(1) {
                    (2, (u32::from(c & 0x1F) << 6) | u32::from(d & 0x3F))
                } else if c & 0xF0 == 0xE0 && i + 2 < n && cont(1) && cont(2) {
                    let e = data[i + 2];
                    (
                        3,
                        (u32::from(c & 0x0F) << 12)
                            | (u32::from(d & 0x3F) << 6)
                            | u32::from(e & 0x3F),
                    )
                } else if c & 0xF8 == 0xF0 && i + 3 < n && cont(1) && cont(2) && cont(3) {
                    let (e, f) = (data[i + 2], data[i + 3]);
                    (
                        4,
                        (u32::from(c & 0x07) << 18)
                            | (u32::from(d & 0x3F) << 12)
                            | (u32::from(e & 0x3F) << 6)
                            | u32::from(f & 0x3F),
                    )
                } else {
                    (1, 0)
                };
                match len {
                    1 => out.push_str(&format!("\\x{c:02x}")),
                    4 => out.push_str(&format!("\\U{cp:08x}")),
                    _ => out.push_str(&format!("\\u{cp:04x}")),
                }
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out.push('"');
    out
}

fn addr(obj: &ObjectRef) -> String {
    format!("0x{:x}", obj.as_ptr() as usize)
}

fn is_container(ti: i32) -> bool {
    matches!(ti, kTVMFFIArray | kTVMFFIList | kTVMFFIMap | kTVMFFIDict)
}

fn repr(
    state: &Arc<Mutex<ReprState>>,
    value: AnyView<'_>,
    depth: usize,
    out: &mut Out<'_>,
) -> Result<()> {
    deep(|| repr_level(state, value, depth, out))
}

/// Writes the repr of a value that is not an object reflection walks
/// (scalars, strings, tensors, shapes, ...); answers false for the others.
fn repr_leaf(value: AnyView<'_>, show_addr: bool, out: &mut String) -> Result<bool> {
    let ti = value.type_index();
    match ti {
        kTVMFFINone => out.push_str("None"),
        kTVMFFIBool => out.push_str(if value.as_i64().unwrap_or(0) != 0 {
            "True"
        } else {
            "False"
        }),
        kTVMFFIInt => out.push_str(&value.as_i64().unwrap_or(0).to_string()),
        kTVMFFIFloat => out.push_str(&float_text(value.as_f64().unwrap_or(0.0))),
        _ => {
            if let Some(dt) = value.as_dtype() {
                out.push_str(&crate::runtime::value::dtype::to_string(dt)?);
            } else if let Some(d) = value.as_device() {
                out.push_str(&device_text(d));
            } else if let Some(t) = text_of(value, TextKind::Str) {
                out.push_str(&escaped_string(t));
            } else if let Some(t) = text_of(value, TextKind::Bytes) {
                out.push_str(&bytes_text(t));
            } else if !is_object_index(ti) {
                out.push_str(&type_key_of(ti));
            } else if let Some(obj) = value.to_object() {
                match ti {
                    kTVMFFIBigInt => out.push_str(&big_int_to_string(
                        crate::runtime::value::scalar::big_int_words(value).unwrap_or(&[]),
                    )),
                    kTVMFFITensor => {
                        let t = crate::runtime::value::tensor::dl_tensor(&obj)?;
                        let dims: Vec<String> = crate::runtime::value::tensor::shape(&obj)?
                            .iter()
                            .map(i64::to_string)
                            .collect();
                        out.push_str(&format!(
                            "{}[{}]@{}",
                            crate::runtime::value::dtype::to_string(t.dtype)?,
                            dims.join(", "),
                            device_text(t.device)
                        ));
                        if show_addr {
                            out.push_str(&format!("@{}", addr(&obj)));
                        }
                    }
                    kTVMFFIShape => {
                        let dims: Vec<String> = crate::runtime::value::scalar::shape_dims(&obj)
                            .unwrap_or(&[])
                            .iter()
                            .map(i64::to_string)
                            .collect();
                        out.push_str(&format!("Shape({})", dims.join(", ")));
                    }
                    _ => return Ok(false),
                }
            } else {
                out.push_str("None");
            }
        }
    }
    Ok(true)
}

fn repr_level(
    state: &Arc<Mutex<ReprState>>,
    value: AnyView<'_>,
    depth: usize,
    out: &mut Out<'_>,
) -> Result<()> {
    let ti = value.type_index();
    let show_addr = rlock(state).show_addr;
    let obj = match value.to_object() {
        Some(obj) if is_object_index(ti) => obj,
        _ => {
            repr_leaf(value, show_addr, out.text)?;
            return Ok(());
        }
    };
    let key = obj.as_ptr() as usize;
    {
        let s = rlock(state);
        match s.done.get(&key) {
            Some(Printed::At(range)) if out.main => {
                let range = range.clone();
                drop(s);
                out.text.extend_from_within(range);
                return Ok(());
            }
            Some(Printed::Text(text)) => {
                out.text.push_str(text.as_str());
                return Ok(());
            }
            _ => {}
        }
        if s.in_progress.contains(&key) {
            out.text.push_str("...");
            if s.show_addr {
                out.text.push_str(&format!("@{}", addr(&obj)));
            }
            return Ok(());
        }
    }
    if obj == crate::runtime::model::object::invalid_object() {
        out.text.push_str("<MISSING>");
        return Ok(());
    }
    if obj == crate::runtime::model::object::kwargs_object() {
        out.text.push_str("<KWARGS>");
        return Ok(());
    }
    if repr_leaf(value, show_addr, out.text)? {
        return Ok(());
    }
    if depth >= MAX_DEPTH {
        return Err(too_deep("ReprPrint"));
    }
    let start = out.text.len();
    // Records what was printed from `start` (for objects met again):
    // positions in the main buffer; texts, up to a budget, in a hook's.
    let finish = |out: &mut Out<'_>| {
        let mut s = rlock(state);
        s.in_progress.remove(&key);
        if out.main {
            s.done.insert(key, Printed::At(start..out.text.len()));
        } else {
            let text = &out.text[start..];
            if s.done_bytes + text.len() <= REPR_CACHE_BYTES {
                s.done_bytes += text.len();
                s.done.insert(key, Printed::Text(text.to_string()));
            }
        }
    };
    if let Some(f) = hook("__ffi_repr__", ti) {
        rlock(state).in_progress.insert(key);
        let inner = state.clone();
        let callback = Function::from_closure(move |args| {
            args.expect_len("fn_repr", 1)?;
            let mut text = String::new();
            repr(&inner, args.get(0), 0, &mut Out::hook(&mut text))?;
            Ok(crate::runtime::model::string::make_text(
                text.as_bytes(),
                TextKind::Str,
            ))
        });
        let (o, cb) = (Any::from(obj.clone()), Any::from(callback.into_object()));
        let text = f.call(&[o.view(), cb.view()]).and_then(|v| {
            v.view()
                .as_str_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .ok_or_else(|| Error::type_error("__ffi_repr__ must return a string"))
        });
        let text = match text {
            Ok(text) => text,
            Err(e) => {
                rlock(state).in_progress.remove(&key);
                return Err(e);
            }
        };
        out.text.push_str(&text);
        if show_addr && is_container(ti) {
            out.text.push_str(&format!("@{}", addr(&obj)));
        }
        finish(out);
        return Ok(());
    }
    if crate::runtime::model::lineage::is_instance(ti, kEnum) {
        // SAFETY: enum objects have the EnumObj layout.
        let e = unsafe { obj.payload::<crate::runtime::reflect::reflected::EnumObj>() };
        let name = e.str_index.0.view().as_str_bytes().unwrap_or(b"");
        out.text.push_str(&format!(
            "{}.{}",
            type_key_of(ti),
            String::from_utf8_lossy(name)
        ));
        if show_addr {
            out.text.push_str(&format!("@{}", addr(&obj)));
        }
        finish(out);
        return Ok(());
    }
    {
        let mut s = rlock(state);
        s.in_progress.insert(key);
        s.composed |= depth == 0;
    }
    match repr_children(state, &obj, depth, show_addr, out) {
        Ok(()) => {
            finish(out);
            Ok(())
        }
        Err(e) => {
            rlock(state).in_progress.remove(&key);
            Err(e)
        }
    }
}

/// Writes the items of a container or the fields of a reflected object.
fn repr_children(
    state: &Arc<Mutex<ReprState>>,
    obj: &ObjectRef,
    depth: usize,
    show_addr: bool,
    out: &mut Out<'_>,
) -> Result<()> {
    let ti = obj.type_index();
    let each = |items: &[Any], out: &mut Out<'_>| -> Result<()> {
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                out.text.push_str(", ");
            }
            repr(state, v.view(), depth + 1, out)?;
        }
        Ok(())
    };
    match ti {
        kTVMFFIArray => {
            let items = elements(obj)?;
            out.text.push('(');
            each(&items, out)?;
            out.text.push_str(if items.len() == 1 { ",)" } else { ")" });
        }
        kTVMFFIList => {
            out.text.push('[');
            each(&elements(obj)?, out)?;
            out.text.push(']');
        }
        kTVMFFIMap | kTVMFFIDict => {
            out.text.push('{');
            for (i, (k, v)) in map::items(obj)?.iter().enumerate() {
                if i > 0 {
                    out.text.push_str(", ");
                }
                repr(state, k.view(), depth + 1, out)?;
                out.text.push_str(": ");
                repr(state, v.view(), depth + 1, out)?;
            }
            out.text.push('}');
        }
        _ => {
            out.text.push_str(&type_key_of(ti));
            if show_addr {
                out.text.push_str(&format!("@{}", addr(obj)));
            }
            let fields = field_values(obj, kTVMFFIFieldFlagBitMaskReprOff)?;
            if fields.is_empty() {
                return Ok(());
            }
            let mut seen = HashSet::new();
            out.text.push('(');
            for (info, v) in &fields {
                // SAFETY: field names live in the type table's pool.
                let name = unsafe { crate::runtime::model::bytes::byte_slice(info.name) };
                // A name shadowed by a subclass is shown once, as first met.
                if !seen.insert(name) {
                    continue;
                }
                if seen.len() > 1 {
                    out.text.push_str(", ");
                }
                out.text.push_str(&String::from_utf8_lossy(name));
                out.text.push('=');
                repr(state, v.view(), depth + 1, out)?;
            }
            out.text.push(')');
            return Ok(());
        }
    }
    if show_addr {
        out.text.push_str(&format!("@{}", addr(obj)));
    }
    Ok(())
}

/// Registers `ffi.ReprPrint`.
pub fn register(g: &mut Globals<'_>) {
    g.add(typed_fn!("ffi.ReprPrint", |value: AnyView<'_>| -> StrAny {
        let (text, composed) = repr_print(value.to_owned_any()?.view())?;
        // Composed texts are heap strings in the reference.
        Ok(StrAny(if composed {
            Any::from(crate::runtime::model::string::new_text_object(
                text.as_bytes(),
                TextKind::Str,
            ))
        } else {
            crate::runtime::model::string::make_text(text.as_bytes(), TextKind::Str)
        }))
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::algo::recursive_compare::recursive_compare;
    use crate::runtime::algo::recursive_hash::recursive_hash;
    use crate::runtime::value::seq;

    #[test]
    fn deep_nesting_on_a_small_stack() {
        // Two equal chains of 20k nested lists, walked on a thread with a
        // 256 KiB stack.
        let chain = || {
            let mut v = Any::from(seq::new_list(Vec::new()));
            for _ in 0..20_000 {
                v = Any::from(seq::new_list(vec![v]));
            }
            v
        };
        let (a, b) = (chain(), chain());
        let (eq, hashes_equal, repr_len, a, b) = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let eq = recursive_compare(a.view(), b.view(), true).unwrap();
                let hashes_equal =
                    recursive_hash(a.view()).unwrap() == recursive_hash(b.view()).unwrap();
                let (repr, _) = repr_print(a.view()).unwrap();
                (eq, hashes_equal, repr.len(), a, b)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(eq, 0);
        assert!(hashes_equal);
        assert_eq!(repr_len, 40_002);
        // Releasing the chains recurses through the lists' deleters, which
        // grow the stack as the walks do.
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || drop((a, b)))
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn string_escapes_like_python() {
        assert_eq!(escaped_string(b"a\"b\n"), r#""a\"b\n""#);
        assert_eq!(escaped_string("é".as_bytes()), r#""\u00e9""#);
        assert_eq!(escaped_string(b"\x01"), r#""\x01""#);
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(1e20), "1e+20");
    }
}
