//! JSON as TVM-FFI values (`ffi.json.Parse`, `ffi.json.Stringify`): objects
//! are Maps in document order, arrays Arrays, numbers ints when they are
//! integers that fit in int64 and floats otherwise; `NaN`, `Infinity` and
//! `-Infinity` are accepted and written, as the reference does. Error
//! messages follow the reference's (`Expecting value: line 1 column 5 (char
//! 4)`). Each nesting level runs through [`crate::runtime::model::depth::deep`] and nesting
//! is bounded, so hostile input cannot exhaust the stack.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{value::map, value::seq};
use std::collections::HashSet;

/// The deepest nesting parsed or written.
use crate::runtime::model::depth::MAX_DEPTH;

/// `ffi.json.Parse`.
pub fn parse(text: &[u8]) -> Result<Any> {
    parse_with(text, None)
}

/// [`parse`] of a JSON graph (`{"root_index": .., "nodes": [..]}`) that
/// hands each element of the top-level `nodes` array to `on_node` as soon
/// as it is parsed, instead of keeping it: the answer's `nodes` is empty.
/// A reader can then decode each node and release its JSON before the
/// next is parsed.
pub fn parse_graph<'a>(
    text: &'a [u8],
    on_node: &'a mut dyn FnMut(Any) -> Result<()>,
) -> Result<Any> {
    parse_with(text, Some(on_node))
}

fn parse_with<'a>(
    text: &'a [u8],
    on_node: Option<&'a mut dyn FnMut(Any) -> Result<()>>,
) -> Result<Any> {
    let mut p = Parser {
        s: text,
        pos: 0,
        line: 1,
        line_start: 0,
        strings: std::collections::HashMap::new(),
        on_node,
        nodes_next: false,
    };
    let value = p.value(0)?;
    p.skip_spaces();
    if p.pos != p.s.len() {
        return Err(p.error("Extra data"));
    }
    Ok(value)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
    /// Short strings made so far, shared by every later occurrence (a
    /// JSON graph repeats its type keys once per node): strings are
    /// immutable, so one object serves them all.
    strings: std::collections::HashMap<Vec<u8>, Any>,
    /// Where the elements of the top-level `nodes` array go (see
    /// [`parse_graph`]), and whether the value being parsed is that array.
    on_node: Option<&'a mut dyn FnMut(Any) -> Result<()>>,
    nodes_next: bool,
}

/// The longest string [`Parser::strings`] shares, and how many it keeps.
const SHARED_STRING_BYTES: usize = 64;
const SHARED_STRINGS: usize = 4096;

impl Parser<'_> {
    fn error(&self, what: &str) -> Error {
        self.error_at_copy(self.pos, what)
    }

    fn error_at(&mut self, pos: usize, what: &str) -> Error {
        self.pos = pos;
        self.error(what)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while let Some(c @ (b' ' | b'\t' | b'\n' | b'\r')) = self.peek() {
            self.pos += 1;
            if c == b'\n' {
                self.line += 1;
                self.line_start = self.pos;
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Any> {
        crate::runtime::model::depth::deep(|| self.value_level(depth))
    }

    fn value_level(&mut self, depth: usize) -> Result<Any> {
        self.skip_spaces();
        let start = self.pos;
        if depth >= MAX_DEPTH {
            return Err(self.error("Maximum nesting depth exceeded"));
        }
        let to_sink = core::mem::take(&mut self.nodes_next);
        match self.peek() {
            None => Err(self.error("Expecting value")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth, to_sink),
            Some(b'"') => {
                let s = self.string()?;
                Ok(self.text(s))
            }
            Some(b't') if self.literal(b"true") => Ok(Any::from(true)),
            Some(b'f') if self.literal(b"false") => Ok(Any::from(false)),
            Some(b'n') if self.literal(b"null") => Ok(Any::NONE),
            Some(b't' | b'f' | b'n') => Err(self.error_at(start, "Expecting value")),
            Some(_) => self.number(),
        }
    }

    /// The str value of `s`: a short one shared with earlier occurrences.
    fn text(&mut self, s: Vec<u8>) -> Any {
        if s.len() > SHARED_STRING_BYTES {
            return make_text(&s, TextKind::Str);
        }
        if let Some(v) = self.strings.get(&s) {
            return v.clone();
        }
        let v = make_text(&s, TextKind::Str);
        if self.strings.len() < SHARED_STRINGS {
            self.strings.insert(s, v.clone());
        }
        v
    }

    fn number(&mut self) -> Result<Any> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'I') => {
                return if self.literal(b"Infinity") {
                    Ok(Any::from(if negative {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    }))
                } else {
                    Err(self.error_at(start, "Expecting value"))
                };
            }
            Some(b'N') if !negative => {
                return if self.literal(b"NaN") {
                    Ok(Any::from(f64::NAN))
                } else {
                    Err(self.error_at(start, "Expecting value"))
                };
            }
            _ => {}
        }
        while let Some(b'0'..=b'9' | b'e' | b'E' | b'+' | b'-' | b'.') = self.peek() {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).expect("ASCII");
        if text.is_empty() {
            return Err(self.error("Expecting value"));
        }
        if !text.contains(['.', 'e', 'E'])
            && let Ok(i) = text.parse::<i64>()
        {
            return Ok(Any::from(i));
        }
        // strtod accepts what Rust's parser does for these characters, bar
        // a leading '+' (which strtod also takes).
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Any::from(x)),
            _ => Err(self.error_at(start, "Expecting value")),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.s.get(self.pos..self.pos + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        let v = u32::from_str_radix(text, 16).ok()?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        self.pos += 4;
        Some(v)
    }

    fn string(&mut self) -> Result<Vec<u8>> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_at(start, "Unterminated string starting at"));
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                c if c < b' ' => return Err(self.error("Invalid control character at")),
                b'\\' => {
                    self.pos += 1;
                    let simple = match self.peek() {
                        Some(b'"') => Some(b'"'),
                        Some(b'\\') => Some(b'\\'),
                        Some(b'/') => Some(b'/'),
                        Some(b'b') => Some(0x08),
                        Some(b'f') => Some(0x0c),
                        Some(b'n') => Some(b'\n'),
                        Some(b'r') => Some(b'\r'),
                        Some(b't') => Some(b'\t'),
                        Some(b'u') => None,
                        _ => return Err(self.error("Invalid \\escape")),
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        self.pos += 1;
                        continue;
                    }
                    let escape = self.pos;
                    self.pos += 1;
                    let first = self
                        .hex4()
                        .ok_or_else(|| self.error_at_copy(escape, "Invalid \\uXXXX escape"))?;
                    let code = if (0xD800..=0xDFFF).contains(&first) {
                        if first >= 0xDC00 || !self.literal(b"\\u") {
                            return Err(
                                self.error_at(escape, "Invalid surrogate pair of \\uXXXX escapes")
                            );
                        }
                        let second_pos = self.pos;
                        let second = self.hex4().ok_or_else(|| {
                            self.error_at_copy(second_pos, "Invalid \\uXXXX escape")
                        })?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(self.error_at(
                                second_pos,
                                "Invalid surrogate pair of \\uXXXX escapes",
                            ));
                        }
                        ((first - 0xD800) << 10) + (second - 0xDC00) + 0x10000
                    } else {
                        first
                    };
                    let ch = char::from_u32(code).unwrap_or('\u{FFFD}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// The error `what` at `pos` of the current line, leaving the position.
    fn error_at_copy(&self, pos: usize, what: &str) -> Error {
        Error::value(format!(
            "{what}: line {} column {} (char {})",
            self.line,
            pos - self.line_start + 1,
            pos
        ))
    }

    /// An array; with `to_sink`, its elements go to `on_node`.
    fn array(&mut self, depth: usize, to_sink: bool) -> Result<Any> {
        self.pos += 1;
        self.skip_spaces();
        let mut items = Vec::new();
        match self.peek() {
            None => return Err(self.error("Expecting value")),
            Some(b']') => {
                self.pos += 1;
                return Ok(Any::from(seq::new_array(items)));
            }
            _ => {}
        }
        loop {
            // The reference's fallback message for input ending here.
            if self.peek().is_none() {
                return Err(self.error("Syntax error near"));
            }
            let item = self.value(depth + 1)?;
            match &mut self.on_node {
                Some(sink) if to_sink => sink(item)?,
                _ => items.push(item),
            }
            self.skip_spaces();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_spaces();
                }
                Some(b']') => {
                    self.pos += 1;
                    if to_sink {
                        // One `nodes` array is streamed; a repeated key is
                        // kept in the answer, for the reader to see.
                        self.on_node = None;
                    }
                    return Ok(Any::from(seq::new_array(items)));
                }
                _ => return Err(self.error("Expecting ',' delimiter")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Any> {
        self.pos += 1;
        self.skip_spaces();
        let mut pairs = Vec::new();
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                return Ok(Any::from(map::new_map(kTVMFFIMap, pairs)?));
            }
            Some(b'"') => {}
            _ => return Err(self.error("Expecting property name enclosed in double quotes")),
        }
        loop {
            if self.peek().is_none() {
                return Err(self.error("Syntax error near"));
            }
            if self.peek() != Some(b'"') {
                return Err(self.error("Expecting property name enclosed in double quotes"));
            }
            let key = self.string()?;
            self.skip_spaces();
            if self.peek() != Some(b':') {
                return Err(self.error("Expecting ':' delimiter"));
            }
            self.pos += 1;
            self.nodes_next = depth == 0 && key == b"nodes" && self.on_node.is_some();
            let value = self.value(depth + 1)?;
            pairs.push((make_text(&key, TextKind::Str), value));
            self.skip_spaces();
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Any::from(map::new_map(kTVMFFIMap, pairs)?));
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_spaces();
                }
                _ => return Err(self.error("Expecting ',' delimiter")),
            }
        }
    }
}

/// `ffi.json.Stringify(value, indent)`: compact without an indent, else one
/// item per line. Indentation grows with the nesting (its total is
/// quadratic in the depth, as the reference's): an output that memory
/// cannot hold is a MemoryError, not an abort.
pub fn stringify(value: AnyView<'_>, indent: usize) -> Result<String> {
    stringify_with(value, indent, usize::MAX)
}

/// [`stringify()`] for people reading it (`ffi.ArtifactInspect`): items one
/// per line down to [`READABLE_LEVELS`] levels, compact below, so the
/// output stays linear in the input however deep it nests.
pub fn stringify_readable(value: AnyView<'_>, indent: usize) -> Result<String> {
    stringify_with(value, indent, READABLE_LEVELS)
}

/// How many nesting levels [`stringify_readable`] indents.
pub const READABLE_LEVELS: usize = 64;

fn stringify_with(value: AnyView<'_>, indent: usize, pretty_levels: usize) -> Result<String> {
    let mut w = Writer {
        out: String::new(),
        indent,
        level: 0,
        max_level: indent.saturating_mul(pretty_levels),
        active: HashSet::new(),
        root: Some(value.to_owned_any()?),
    };
    w.value(value, 0)?;
    Ok(w.out)
}

struct Writer {
    out: String,
    indent: usize,
    level: usize,
    /// Deeper than this (in spaces), items are written compactly.
    max_level: usize,
    active: HashSet<usize>,
    /// The value being written, until the output passes [`SIZE_CHECK_AT`]
    /// and its whole size is reserved.
    root: Option<Any>,
}

/// Output size past which the writer measures the whole output and
/// reserves it at once: a small graph whose shared parts repeat (a list
/// holding the same long string a million times) can ask for more output
/// than memory holds, and growing toward it would exhaust memory first.
const SIZE_CHECK_AT: usize = 64 << 20;

/// The compact size of `v` as written (no indentation), counting a shared container at each occurrence from one walk
/// of it (`sizes`, by address; 0 while it is being walked, so a cycle
/// counts nothing: the writer refuses it). Saturates at `u64::MAX`.
fn compact_size(
    v: AnyView<'_>,
    sizes: &mut std::collections::HashMap<usize, u64>,
    depth: usize,
) -> u64 {
    if depth >= MAX_DEPTH {
        return 0;
    }
    let ti = v.type_index();
    match ti {
        kTVMFFISmallStr => escaped_len(v.as_str_bytes().unwrap_or(b"")) as u64,
        kTVMFFIStr => {
            // Measured once per string object, however often it recurs.
            let key = v.as_object_ptr().map_or(0, |p| p.as_ptr() as usize);
            *sizes
                .entry(key)
                .or_insert_with(|| escaped_len(v.as_str_bytes().unwrap_or(b"")) as u64)
        }
        kTVMFFIArray | kTVMFFIList | kTVMFFIMap => {
            let Some(obj) = v.to_object() else { return 4 };
            let key = obj.as_ptr() as usize;
            if let Some(&n) = sizes.get(&key) {
                return n;
            }
            sizes.insert(key, 0);
            let mut n = 2u64;
            let add = |n: &mut u64, m: u64| *n = n.saturating_add(m).saturating_add(1);
            if ti == kTVMFFIMap {
                for (k, val) in map::items(&obj).unwrap_or_default() {
                    let m = compact_size(k.view(), sizes, depth + 1)
                        .saturating_add(1)
                        .saturating_add(crate::runtime::model::depth::deep(|| {
                            compact_size(val.view(), sizes, depth + 1)
                        }));
                    add(&mut n, m);
                }
            } else {
                for e in seq::elements(&obj, ti).unwrap_or_default().iter() {
                    // SAFETY: stored elements are valid.
                    let e = unsafe { AnyView::from_raw(e) };
                    add(
                        &mut n,
                        crate::runtime::model::depth::deep(|| compact_size(e, sizes, depth + 1)),
                    );
                }
            }
            // One comma fewer than items.
            let n = if n > 2 { n - 1 } else { n };
            sizes.insert(key, n);
            n
        }
        kTVMFFIBool => 4 + u64::from(v.as_i64() == Some(0)),
        kTVMFFIInt => {
            let i = v.as_i64().unwrap_or(0);
            u64::from(i < 0) + u64::from(i.unsigned_abs().checked_ilog10().unwrap_or(0)) + 1
        }
        kTVMFFIFloat => float(v.as_f64().unwrap_or(0.0)).len() as u64,
        _ => 4,
    }
}

/// A JSON string literal, escaped as the reference does.
pub fn escape(text: &[u8], out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, &c) in text.iter().enumerate() {
        let esc = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'/' => "\\/",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            c if c < 0x20 || c == 0x7f => "",
            _ => continue,
        };
        out.push_str(&String::from_utf8_lossy(&text[start..i]));
        if esc.is_empty() {
            out.push_str(&format!("\\u{c:04x}"));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&String::from_utf8_lossy(&text[start..]));
    out.push('"');
}

/// The length of `text` as [`escape`] writes it, quotes included (an
/// upper bound for invalid UTF-8, each of whose bytes may become U+FFFD).
fn escaped_len(text: &[u8]) -> usize {
    let high = if core::str::from_utf8(text).is_ok() {
        1
    } else {
        3
    };
    text.iter().fold(2usize, |n, &c| {
        n.saturating_add(match c {
            b'"' | b'\\' | b'/' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            c if c < 0x20 || c == 0x7f => 6,
            c if c >= 0x80 => high,
            _ => 1,
        })
    })
}

/// A float as the reference writes it: integral values below 2^53 as
/// `%.1f`, others as `%.17g`; NaN and infinities as JavaScript literals.
fn float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-Infinity" } else { "Infinity" }.into();
    }
    if x.abs() < (1u64 << 53) as f64 && x.fract() == 0.0 {
        return format!("{x:.1}");
    }
    crate::runtime::model::string::format_f64(c"%.17g", x)
}

impl Writer {
    /// Makes room for `n` more bytes, fallibly: a small graph whose shared
    /// parts repeat (a list holding the same long string a million times)
    /// can ask for more output than memory holds; that is a MemoryError.
    fn reserve(&mut self, n: usize) -> Result<()> {
        if self.out.len().saturating_add(n) > SIZE_CHECK_AT
            && let Some(root) = self.root.take()
        {
            let total = compact_size(root.view(), &mut Default::default(), 0);
            let wanted = usize::try_from(total).unwrap_or(usize::MAX);
            // More than the machine's memory is refused even where the
            // allocator would promise it (overcommit).
            let physical = crate::platform::os::physical_memory()
                .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
            (wanted <= physical)
                .then(|| {
                    self.out
                        .try_reserve_exact(wanted.saturating_sub(self.out.len()))
                        .ok()
                })
                .flatten()
                .ok_or_else(|| {
                    Error::new(
                        crate::runtime::model::error::ErrorKind::MemoryError,
                        format!(
                            "json.Stringify: the output would take at least {total} bytes, \
                                 more than memory holds"
                        ),
                    )
                })?;
        }
        self.out.try_reserve(n).map_err(|_| {
            Error::new(
                crate::runtime::model::error::ErrorKind::MemoryError,
                format!(
                    "json.Stringify: the output outgrows memory ({} bytes written)",
                    self.out.len()
                ),
            )
        })
    }

    fn push_str(&mut self, s: &str) -> Result<()> {
        self.reserve(s.len())?;
        self.out.push_str(s);
        Ok(())
    }

    fn push(&mut self, c: char) -> Result<()> {
        self.reserve(c.len_utf8())?;
        self.out.push(c);
        Ok(())
    }

    /// A string literal, its escaped length reserved first.
    fn string(&mut self, text: &[u8]) -> Result<()> {
        self.reserve(escaped_len(text))?;
        escape(text, &mut self.out);
        Ok(())
    }

    fn newline(&mut self) -> Result<()> {
        if self.indent != 0 && self.level <= self.max_level {
            self.reserve(1 + self.level)?;
            self.out.push('\n');
            // Whole runs of spaces at a time: a deep indent is a memset, not
            // a character loop.
            const SPACES: &str = match core::str::from_utf8(&[b' '; 256]) {
                Ok(s) => s,
                Err(_) => unreachable!(),
            };
            let mut left = self.level;
            while left > 0 {
                let n = left.min(SPACES.len());
                self.out.push_str(&SPACES[..n]);
                left -= n;
            }
        }
        Ok(())
    }

    fn value(&mut self, v: AnyView<'_>, depth: usize) -> Result<()> {
        crate::runtime::model::depth::deep(|| self.value_level(v, depth))
    }

    fn value_level(&mut self, v: AnyView<'_>, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(Error::value(
                "json.Stringify: maximum nesting depth exceeded",
            ));
        }
        let raw = v.raw();
        // An object kind with a NULL handle is None, as C++ reads it.
        let ti = match raw.type_index {
            t if crate::runtime::model::any::is_object_index(t) && v.as_object_ptr().is_none() => {
                kTVMFFINone
            }
            t => t,
        };
        match ti {
            kTVMFFINone => self.push_str("null")?,
            kTVMFFIBool => self.push_str(if v.as_i64() == Some(0) {
                "false"
            } else {
                "true"
            })?,
            kTVMFFIInt => self.push_str(&v.as_i64().unwrap_or(0).to_string())?,
            kTVMFFIFloat => self.push_str(&float(v.as_f64().unwrap_or(0.0)))?,
            kTVMFFISmallStr | kTVMFFIStr => self.string(v.as_str_bytes().unwrap_or(b""))?,
            kTVMFFIArray | kTVMFFIList => {
                let obj = v.to_object().expect("an object");
                let key = obj.as_ptr() as usize;
                let is_list = ti == kTVMFFIList;
                if is_list && !self.active.insert(key) {
                    return Err(Error::value("Cycle detected: List contains itself"));
                }
                let items: Vec<Any> = seq::elements(&obj, ti)?
                    .iter()
                    // SAFETY: stored elements are valid.
                    .map(|e| unsafe { AnyView::from_raw(e) }.to_owned_any())
                    .collect::<Result<_>>()?;
                self.push('[')?;
                self.level += self.indent;
                for (i, item) in items.iter().enumerate() {
                    if i != 0 {
                        self.push(',')?;
                    }
                    self.newline()?;
                    self.value(item.view(), depth + 1)?;
                }
                self.level -= self.indent;
                self.newline()?;
                self.push(']')?;
                if is_list {
                    self.active.remove(&key);
                }
            }
            kTVMFFIMap => {
                let obj = v.to_object().expect("an object");
                self.push('{')?;
                self.level += self.indent;
                for (i, (k, val)) in map::items(&obj)?.iter().enumerate() {
                    if i != 0 {
                        self.push(',')?;
                    }
                    self.newline()?;
                    let key = k.view();
                    let text = match key.type_index() {
                        kTVMFFISmallStr | kTVMFFIStr => key.as_str_bytes().unwrap_or(b""),
                        t => {
                            return Err(Error::value(format!(
                                "Expect key to be string, got `{}`",
                                crate::runtime::model::type_table::type_key_of(t)
                            )));
                        }
                    };
                    self.string(text)?;
                    self.push(':')?;
                    if self.indent != 0 {
                        self.push(' ')?;
                    }
                    self.value(val.view(), depth + 1)?;
                }
                self.level -= self.indent;
                self.newline()?;
                self.push('}')?;
            }
            t => {
                return Err(Error::value(format!(
                    "Unsupported type: `{}`",
                    crate::runtime::model::type_table::type_key_of(t)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let v = parse(br#"{"a": [1, 2.5, true, null, "x\n\u00e9"], "b": -Infinity}"#).unwrap();
        assert_eq!(
            stringify(v.view(), 0).unwrap(),
            r#"{"a":[1,2.5,true,null,"x\né"],"b":-Infinity}"#
        );
        assert_eq!(stringify(Any::from(3.0).view(), 0).unwrap(), "3.0");
        let err = parse(b"[1,").unwrap_err().to_string();
        assert!(
            err.contains("Syntax error near: line 1 column 4 (char 3)"),
            "{err}"
        );
        assert!(parse(b"\"\\ud800\"").is_err());
        assert!(parse(&[b'['; 100_000]).is_err());
    }

    #[test]
    fn escaped_lengths_are_exact() {
        for text in [
            &b"plain"[..],
            b"q\"b\\s/\n\x01\x7f",
            "\u{e9}\u{4e2d}".as_bytes(),
        ] {
            let mut out = String::new();
            escape(text, &mut out);
            assert_eq!(escaped_len(text), out.len(), "{out}");
        }
    }

    #[test]
    fn compact_sizes_are_exact() {
        let v = parse(
            br#"{"a": [1, -20, 2.5, true, false, null, "x\n\u00e9", [], {}], "b": [-Infinity, {"c": [[0]]}]}"#,
        )
        .unwrap();
        let written = stringify(v.view(), 0).unwrap();
        let size = compact_size(v.view(), &mut Default::default(), 0);
        assert_eq!(size, written.len() as u64, "{written}");
    }

    /// A list holding the same 1 MiB string 2^20 times weighs 17 MiB; its
    /// JSON would take a TiB. Measured once the output passes 64 MiB, it is
    /// a MemoryError, with at most some 128 MiB written.
    #[test]
    fn output_that_outgrows_memory_is_a_memory_error() {
        let s = make_text(&vec![b'x'; 1 << 20], TextKind::Str);
        let list = seq::new_list(vec![s; 1 << 20]);
        let err = stringify(Any::from(list).view(), 0)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "MemoryError: json.Stringify: the output would take at least {} bytes, more \
                 than memory holds",
                2 + (1u64 << 20) * ((1 << 20) + 2) + (1 << 20) - 1
            )
        );
    }
}
