//! The `__tvm_ffi__library_bin` container: reader and writer.
//!
//! Layout (little-endian): `u64 nbytes`, then `nbytes` of stream holding
//! `vec<u64> import_tree_indptr`, `vec<u64> child_indices` (a vec is a u64
//! count and its items), then one entry per module (`indptr.len() - 1` of
//! them): `str kind` (u64 length + bytes) and, unless the kind is `_lib`,
//! `bytes payload`. Module `i` imports `child_indices[indptr[i]..indptr[i+1]]`;
//! module 0 is the root.
//!
//! ```
//! use tvm_ffi::module::library_bin::{LIB_KIND, LibraryBin, ModuleEntry, parse, write};
//!
//! // The library itself, importing one module serialized by its kind.
//! let tree = LibraryBin {
//!     modules: vec![
//!         ModuleEntry { kind: LIB_KIND, payload: None },
//!         ModuleEntry { kind: b"cuda", payload: Some(b"a cubin") },
//!     ],
//!     imports: vec![vec![1], vec![]],
//! };
//! let blob = write(&tree)?;
//! assert_eq!(parse(&blob)?, tree);
//! // Hostile bytes get an error naming the offset, never a crash.
//! assert!(parse(&blob[..blob.len() - 1]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The reader expects hostile input: every length is checked against what
//! remains before anything is allocated, indices against the module count,
//! the tree for cycles; each failure names the byte offset and what was
//! wrong. Payloads are borrowed from the blob, never copied.
#![forbid(unsafe_code)]

/// The kind naming the shared library itself.
pub const LIB_KIND: &[u8] = b"_lib";
/// The kind of an entry whose payload is an artifact set record (not a
/// module: it is attached to the root module once the tree is built).
pub const SET_RECORD_KIND: &str = "ffi.ArtifactSet";

/// A malformed blob: where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed __tvm_ffi__library_bin at byte {offset}: {what}")]
pub struct ParseError {
    /// Byte offset from the start of the blob.
    pub offset: usize,
    /// What was wrong there.
    pub what: String,
}

impl From<ParseError> for crate::runtime::model::error::Error {
    /// A `ValueError` with the parser's message.
    fn from(e: ParseError) -> Self {
        Self::value(e.to_string())
    }
}

/// One module of the tree: its kind and, unless it is `_lib`, its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleEntry<'a> {
    /// The module kind (`_lib` for the library itself).
    pub kind: &'a [u8],
    /// The serialized module, None for `_lib`.
    pub payload: Option<&'a [u8]>,
}

/// A decoded module tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryBin<'a> {
    /// The modules; index 0 is the root.
    pub modules: Vec<ModuleEntry<'a>>,
    /// `imports[i]`: the modules module `i` imports, in order.
    pub imports: Vec<Vec<usize>>,
}

impl<'a> LibraryBin<'a> {
    /// The payload of the tree's artifact set record (its first
    /// [`SET_RECORD_KIND`] entry), if it has one.
    pub fn set_record(&self) -> Option<&'a [u8]> {
        self.modules
            .iter()
            .find(|m| m.kind == SET_RECORD_KIND.as_bytes())
            .and_then(|m| m.payload)
    }
}

/// A bounds-checked little-endian reader over the stream part.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data[0]` in the whole blob, for messages.
    base: usize,
}

impl<'a> Reader<'a> {
    fn fail(&self, what: impl Into<String>) -> ParseError {
        ParseError {
            offset: self.base + self.pos,
            what: what.into(),
        }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn u64(&mut self, what: &str) -> Result<u64, ParseError> {
        let bytes = self.take(8, what)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ParseError> {
        if n > self.remaining() {
            return Err(self.fail(format!(
                "{what} needs {n} bytes but only {} remain",
                self.remaining()
            )));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// A length-prefixed byte string.
    fn bytes(&mut self, what: &str) -> Result<&'a [u8], ParseError> {
        let start = self.pos;
        let n = self.u64(&format!("the length of {what}"))?;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.remaining())
            .ok_or_else(|| ParseError {
                offset: self.base + start,
                what: format!(
                    "{what} declares {n} bytes but only {} remain",
                    self.remaining()
                ),
            })?;
        self.take(n, what)
    }

    /// A count-prefixed vector of u64.
    fn u64_vec(&mut self, what: &str) -> Result<Vec<u64>, ParseError> {
        let start = self.pos;
        let count = self.u64(&format!("the count of {what}"))?;
        // Never allocate more than the blob could hold.
        let count = usize::try_from(count)
            .ok()
            .filter(|&c| c <= self.remaining() / 8)
            .ok_or_else(|| ParseError {
                offset: self.base + start,
                what: format!(
                    "{what} declares {count} entries but only {} bytes remain",
                    self.remaining()
                ),
            })?;
        (0..count).map(|_| self.u64(what)).collect()
    }
}

/// Decodes a blob (starting with its u64 size).
pub fn parse(blob: &[u8]) -> Result<LibraryBin<'_>, ParseError> {
    let mut head = Reader {
        data: blob,
        pos: 0,
        base: 0,
    };
    let nbytes = head.u64("the blob size")?;
    let stream_len = usize::try_from(nbytes)
        .ok()
        .filter(|&n| n <= head.remaining())
        .ok_or_else(|| ParseError {
            offset: 0,
            what: format!(
                "the blob declares {nbytes} bytes but only {} follow",
                head.remaining()
            ),
        })?;
    let mut r = Reader {
        data: &blob[8..8 + stream_len],
        pos: 0,
        base: 8,
    };

    let indptr_at = r.base + r.pos;
    let indptr = r.u64_vec("import_tree_indptr")?;
    let children_at = r.base + r.pos;
    let children = r.u64_vec("import_tree_child_indices")?;
    if indptr.is_empty() {
        return Err(ParseError {
            offset: indptr_at,
            what: "import_tree_indptr is empty (no modules)".into(),
        });
    }
    if indptr[0] != 0 {
        return Err(ParseError {
            offset: indptr_at,
            what: format!("import_tree_indptr starts at {}, not 0", indptr[0]),
        });
    }
    if let Some(i) = indptr.windows(2).position(|w| w[1] < w[0]) {
        return Err(ParseError {
            offset: indptr_at,
            what: format!("import_tree_indptr decreases at entry {}", i + 1),
        });
    }
    let last = *indptr.last().expect("non-empty");
    if last > children.len() as u64 {
        return Err(ParseError {
            offset: indptr_at,
            what: format!(
                "import_tree_indptr ends at {last} but there are {} child indices",
                children.len()
            ),
        });
    }
    let num_modules = indptr.len() - 1;
    if num_modules == 0 {
        return Err(ParseError {
            offset: indptr_at,
            what: "the import tree has no modules".into(),
        });
    }
    if let Some((j, &c)) = children
        .iter()
        .enumerate()
        .find(|&(_, &c)| c >= num_modules as u64)
    {
        return Err(ParseError {
            offset: children_at + 8 + 8 * j,
            what: format!("child index {c} is out of range for {num_modules} modules"),
        });
    }

    let mut modules = Vec::with_capacity(num_modules.min(r.remaining() / 8 + 1));
    for i in 0..num_modules {
        let kind = r.bytes(&format!("the kind of module {i}"))?;
        let payload = if kind == LIB_KIND {
            None
        } else {
            Some(r.bytes(&format!("the bytes of module {i}"))?)
        };
        modules.push(ModuleEntry { kind, payload });
    }
    let imports: Vec<Vec<usize>> = (0..num_modules)
        .map(|i| {
            children[indptr[i] as usize..indptr[i + 1] as usize]
                .iter()
                .map(|&c| c as usize)
                .collect()
        })
        .collect();
    if let Some(m) = find_cycle(&imports) {
        return Err(ParseError {
            offset: children_at,
            what: format!("the import tree has a cycle through module {m}"),
        });
    }
    Ok(LibraryBin { modules, imports })
}

/// A module on a cycle of the import graph, if any (iterative DFS).
fn find_cycle(imports: &[Vec<usize>]) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Active,
        Done,
    }
    let mut state = vec![State::New; imports.len()];
    for root in 0..imports.len() {
        if state[root] != State::New {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = State::Active;
        while let Some((node, next)) = stack.last_mut() {
            if let Some(&child) = imports[*node].get(*next) {
                *next += 1;
                match state[child] {
                    State::Active => return Some(child),
                    State::New => {
                        state[child] = State::Active;
                        stack.push((child, 0));
                    }
                    State::Done => {}
                }
            } else {
                state[*node] = State::Done;
                stack.pop();
            }
        }
    }
    None
}

impl From<WriteError> for crate::runtime::model::error::Error {
    /// A `ValueError` with the writer's message.
    fn from(e: WriteError) -> Self {
        Self::value(e.to_string())
    }
}

/// A problem with a tree handed to the writer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The tree has no modules.
    #[error("a library_bin needs at least one module")]
    Empty,
    /// `imports` does not have one list per module.
    #[error("{imports} import lists for {modules} modules")]
    ImportCount {
        /// Number of import lists.
        imports: usize,
        /// Number of modules.
        modules: usize,
    },
    /// A child index is out of range.
    #[error("module {parent} imports module {child}, but there are only {modules}")]
    ChildOutOfRange {
        /// The importing module.
        parent: usize,
        /// The bad index.
        child: usize,
        /// Number of modules.
        modules: usize,
    },
    /// The imports form a cycle.
    #[error("the import tree has a cycle through module {0}")]
    Cycle(usize),
    /// A `_lib` entry has a payload, or another kind has none.
    #[error("module {0}: `_lib` takes no payload and every other kind needs one")]
    Payload(usize),
}

/// Encodes a module tree (with its leading u64 size).
pub fn write(bin: &LibraryBin<'_>) -> Result<Vec<u8>, WriteError> {
    let n = bin.modules.len();
    if n == 0 {
        return Err(WriteError::Empty);
    }
    if bin.imports.len() != n {
        return Err(WriteError::ImportCount {
            imports: bin.imports.len(),
            modules: n,
        });
    }
    for (parent, children) in bin.imports.iter().enumerate() {
        if let Some(&child) = children.iter().find(|&&c| c >= n) {
            return Err(WriteError::ChildOutOfRange {
                parent,
                child,
                modules: n,
            });
        }
    }
    if let Some(m) = find_cycle(&bin.imports) {
        return Err(WriteError::Cycle(m));
    }
    let mut out = vec![0u8; 8];
    let put = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
    put(&mut out, n as u64 + 1);
    let mut offset = 0u64;
    put(&mut out, 0);
    for children in &bin.imports {
        offset += children.len() as u64;
        put(&mut out, offset);
    }
    put(&mut out, offset);
    for &c in bin.imports.iter().flatten() {
        put(&mut out, c as u64);
    }
    for (i, m) in bin.modules.iter().enumerate() {
        if (m.kind == LIB_KIND) != m.payload.is_none() {
            return Err(WriteError::Payload(i));
        }
        put(&mut out, m.kind.len() as u64);
        out.extend_from_slice(m.kind);
        if let Some(p) = m.payload {
            put(&mut out, p.len() as u64);
            out.extend_from_slice(p);
        }
    }
    let stream_len = (out.len() - 8) as u64;
    out[..8].copy_from_slice(&stream_len.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let bin = LibraryBin {
            modules: vec![
                ModuleEntry {
                    kind: LIB_KIND,
                    payload: None,
                },
                ModuleEntry {
                    kind: b"cuda",
                    payload: Some(b"\x7fELF cubin bytes"),
                },
                ModuleEntry {
                    kind: b"graph",
                    payload: Some(b"{}"),
                },
            ],
            imports: vec![vec![1, 2], vec![2], vec![]],
        };
        write(&bin).unwrap()
    }

    #[test]
    fn round_trip() {
        let blob = sample();
        let bin = parse(&blob).unwrap();
        assert_eq!(bin.modules[1].kind, b"cuda");
        assert_eq!(bin.modules[1].payload.unwrap(), b"\x7fELF cubin bytes");
        assert_eq!(bin.imports, vec![vec![1, 2], vec![2], vec![]]);
        assert_eq!(write(&bin).unwrap(), blob);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let blob = sample();
        for cut in 0..blob.len() {
            let mut short = blob[..cut].to_vec();
            assert!(parse(&short).is_err(), "cut at {cut}");
            // Also with the size field claiming less than the full stream.
            if cut >= 8 {
                let len = (cut - 8) as u64;
                short[..8].copy_from_slice(&len.to_le_bytes());
                assert!(parse(&short).is_err(), "consistent size, cut at {cut}");
            }
        }
    }

    #[test]
    fn hostile_lengths_are_rejected_without_allocating() {
        let mut blob = sample();
        blob[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = parse(&blob).unwrap_err();
        assert_eq!(err.offset, 0);
        let mut blob = sample();
        blob[8..16].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
        let err = parse(&blob).unwrap_err();
        assert!(err.what.contains("import_tree_indptr declares"), "{err}");
        // The kind length of module 0.
        let mut blob = sample();
        let kind_at = 8 + 8 + 4 * 8 + 8 + 3 * 8;
        blob[kind_at..kind_at + 8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        let err = parse(&blob).unwrap_err();
        assert_eq!(err.offset, kind_at);
        assert!(err.what.contains("the kind of module 0"), "{err}");
    }

    #[test]
    fn bad_indices_and_cycles_are_rejected() {
        let blob = sample();
        let mut bad = blob.clone();
        let first_child = 8 + 8 + 4 * 8 + 8;
        bad[first_child..first_child + 8].copy_from_slice(&7u64.to_le_bytes());
        assert!(
            parse(&bad)
                .unwrap_err()
                .what
                .contains("child index 7 is out of range")
        );
        // Module 2 imports module 0: a cycle 0 -> 2 -> 0.
        let cyclic = LibraryBin {
            modules: vec![
                ModuleEntry {
                    kind: LIB_KIND,
                    payload: None
                };
                3
            ],
            imports: vec![vec![1, 2], vec![], vec![0]],
        };
        assert_eq!(write(&cyclic), Err(WriteError::Cycle(0)));
        let mut raw = write(&LibraryBin {
            imports: vec![vec![1, 2], vec![], vec![1]],
            ..cyclic.clone()
        })
        .unwrap();
        let last_child = 8 + 8 + 4 * 8 + 8 + 2 * 8;
        raw[last_child..last_child + 8].copy_from_slice(&0u64.to_le_bytes());
        assert!(parse(&raw).unwrap_err().what.contains("cycle"));
        let mut decreasing = blob.clone();
        decreasing[8 + 8 + 8..8 + 8 + 16].copy_from_slice(&5u64.to_le_bytes());
        assert!(parse(&decreasing).is_err());
    }
}
