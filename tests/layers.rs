//! The layering of `src/` (and of `tvmffi/src/`, the tvmffi crate), checked from the source text: which file names
//! which (by `crate::`, `super::`, `self::` and child-module paths, `use`
//! trees included), that no files form an import circle, and that every
//! import runs from a higher layer to a lower one.
//!
//! The rules it enforces:
//! - A folder's `mod.rs` declares its layers in a plain comment after its
//!   module doc, lowest first, on one line
//!   `// Layers, lowest first: a, b c, d.` (children of the
//!   folder, by module name; `b c` are one layer). A file in `d` may name
//!   `a`, `b` and `c`; a file in `a` names none of them; `b` and `c` may
//!   name each other (the circle rule still holds). Children a folder does
//!   not list have no rank: only the circle rule holds for them, unless the
//!   list has a `*`, which stands for every child it does not name.
//! - No circle anywhere: the files form a directed acyclic graph. A `mod.rs`
//!   is a facade: it may re-export its children, and no descendant names it.
//! - The crate root composes: its own imports are not edges (it names every
//!   layer), and the only items below it may name are the composition lists
//!   (`BUILTIN_*`) and exported macros (resolved to the file defining them).
//! - `#[cfg(test)] mod` blocks are left out: like dev-dependencies, a unit
//!   test may build its inputs from any layer.
//!
//! `cargo test --test layers -- --nocapture` prints the graph: its files,
//! its circles (strongly connected components) and its upward imports.
//! `TVM_FFI_LAYERS_SRC=<dir>` reads another tree (another commit's `src/`,
//! from `git worktree add`), so any two commits can be compared.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path from the crate root, e.g. `["runtime", "object", "any"]`.
type ModPath = Vec<String>;

/// One source file of the tree and what it declares.
struct File {
    module: ModPath,
    /// Whether the file is a folder's `mod.rs` (or the crate root).
    is_folder: bool,
    text: String,
}

/// Lexical tokens: identifiers and single punctuation, `::` as one.
fn tokens(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'"' || ((c == b'b' || c == b'c') && b.get(i + 1) == Some(&b'"')) {
            i += if c == b'"' { 1 } else { 2 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if (c == b'r' || ((c == b'b' || c == b'c') && b.get(i + 1) == Some(&b'r')))
            && matches!(b.get(i + 1 + usize::from(c != b'r')), Some(b'"' | b'#'))
        {
            // A raw string: r"..", r#".."#, br"..", ...
            i += 1 + usize::from(c != b'r');
            let hashes = b[i..].iter().take_while(|&&h| h == b'#').count();
            if b.get(i + hashes) != Some(&b'"') {
                out.push("r".into()); // `r#ident`: the raw identifier follows
                i += 1;
                continue;
            }
            i += hashes + 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                if src[i + 1 + ch..].starts_with('\'') {
                    i += 2 + ch;
                } else {
                    i += 1; // a lifetime: its name is an identifier
                }
            }
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(src[start..i].to_owned());
        } else if b[i..].starts_with(b"::") {
            out.push("::".into());
            i += 2;
        } else {
            let ch = src[i..].chars().next().map_or(1, char::len_utf8);
            out.push(src[i..i + ch].to_owned());
            i += ch;
        }
    }
    out
}

/// The source files under `src` (the library's; `src/bin` is a separate crate).
fn files(src: &Path) -> Vec<File> {
    let mut out = Vec::new();
    let mut stack = vec![(src.to_path_buf(), ModPath::new())];
    while let Some((dir, module)) = stack.pop() {
        let mut entries: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !(module.is_empty() && name == "bin") {
                    stack.push((path, [module.clone(), vec![name]].concat()));
                }
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            let is_folder = stem == "mod" || (module.is_empty() && stem == "lib");
            let module = if is_folder {
                module.clone()
            } else {
                [module.clone(), vec![stem.to_owned()]].concat()
            };
            let text = fs::read_to_string(&path).unwrap();
            out.push(File {
                module,
                is_folder,
                text,
            });
        }
    }
    out.sort_by(|a, b| a.module.cmp(&b.module));
    out
}

/// The names a file's paths resolve to: each `crate::`/`super::`/`self::`
/// (or child-module) path, `use` trees expanded, as absolute module paths.
fn named_paths(file: &File, modules: &BTreeSet<ModPath>) -> Vec<ModPath> {
    let t = tokens(&file.text);
    let mut out = Vec::new();
    // The module each brace level is in: inline `mod x { .. }` adds a level.
    let mut scopes: Vec<(usize, ModPath)> = vec![(0, file.module.clone())];
    let mut depth = 0usize;
    let mut i = 0;
    while i < t.len() {
        let here = scopes.last().unwrap().1.clone();
        match t[i].as_str() {
            "{" => depth += 1,
            "}" => {
                if scopes.len() > 1 && scopes.last().unwrap().0 == depth {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
            }
            "mod" if t.get(i + 2).is_some_and(|s| s == "{") => {
                scopes.push((depth + 1, [here.clone(), vec![t[i + 1].clone()]].concat()));
            }
            // `pub(in crate::x)` names a visibility, not an item.
            "in" if i >= 2 && t[i - 1] == "(" && t[i - 2] == "pub" => {
                while i < t.len() && t[i] != ")" {
                    i += 1;
                }
            }
            "$" if t.get(i + 1).is_some_and(|s| s == "crate") => i += 1,
            // Test modules are dev-dependencies: they may build inputs from any layer.
            "#" if t[i..].starts_with(
                &["#", "[", "cfg", "(", "test", ")", "]", "mod"].map(String::from),
            ) && t.get(i + 9).is_some_and(|s| s == "{") =>
            {
                let open = i + 9;
                let mut level = 0;
                i = open;
                loop {
                    level += match t[i].as_str() {
                        "{" => 1,
                        "}" => -1,
                        _ => 0,
                    };
                    if level == 0 {
                        break;
                    }
                    i += 1;
                }
            }
            first @ ("crate" | "super" | "self") if t.get(i + 1).is_some_and(|s| s == "::") => {
                let base = match first {
                    "crate" => ModPath::new(),
                    "self" => here.clone(),
                    _ => here[..here.len().saturating_sub(1)].to_vec(),
                };
                i = use_tree(&t, i + 2, base, &mut out);
                continue;
            }
            // A path through a child module (`any::Any` in a facade, `runtime::x` at the root).
            name if t.get(i + 1).is_some_and(|s| s == "::")
                && (i == 0 || t[i - 1] != "::")
                && modules.contains(&[here.clone(), vec![name.to_owned()]].concat()) =>
            {
                i = use_tree(&t, i, here.clone(), &mut out);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads a path (or a `use` tree) starting at token `i` below `base`;
/// pushes every full path; returns the index after it.
fn use_tree(t: &[String], mut i: usize, mut base: ModPath, out: &mut Vec<ModPath>) -> usize {
    loop {
        match t.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                loop {
                    i = use_tree(t, i, base.clone(), out);
                    match t.get(i).map(String::as_str) {
                        Some(",") => i += 1,
                        _ => break,
                    }
                    if t.get(i).is_some_and(|s| s == "}") {
                        break;
                    }
                }
                return i + 1;
            }
            Some("super") => base.pop().map_or((), drop),
            Some("self") | Some("*") => {}
            Some(s) if s.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                base.push(s.to_owned())
            }
            _ => {
                out.push(base);
                return i;
            }
        }
        i += 1;
        if t.get(i).is_some_and(|s| s == "::") {
            i += 1;
        } else {
            out.push(base);
            return i;
        }
    }
}

/// The import graph: for each file, the files it names.
struct Graph {
    files: Vec<File>,
    edges: BTreeMap<usize, BTreeSet<usize>>,
    /// Edges to the crate root's composition lists (allowed, listed).
    composed: Vec<(usize, String)>,
}

fn graph(src: &Path) -> Graph {
    let files = files(src);
    let index: BTreeMap<ModPath, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    let modules: BTreeSet<ModPath> = index.keys().cloned().collect();
    // `#[macro_export]` macros live at the root; they belong to their file.
    let mut exported = BTreeMap::new();
    for (n, f) in files.iter().enumerate() {
        let t = tokens(&f.text);
        for (k, _) in t.iter().enumerate().filter(|(_, s)| *s == "macro_export") {
            if let Some(m) = t[k..].iter().position(|s| s == "macro_rules") {
                exported.insert(t[k + m + 2].clone(), n);
            }
        }
    }
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut composed = Vec::new();
    for (n, f) in files.iter().enumerate() {
        if f.module.is_empty() {
            continue; // the root composes: it names every layer
        }
        for path in named_paths(f, &modules) {
            // The longest prefix that is a module is the file named.
            let len = (0..=path.len())
                .rev()
                .find(|&k| modules.contains(&path[..k]))
                .unwrap();
            let mut to = index[&path[..len]];
            if len == 0 {
                let item = path.first().cloned().unwrap_or_default();
                match exported.get(&item) {
                    Some(&m) => to = m,
                    None => {
                        composed.push((n, item));
                        continue;
                    }
                }
            }
            if to != n {
                edges.entry(n).or_default().insert(to);
            }
        }
    }
    Graph {
        files,
        edges,
        composed,
    }
}

impl Graph {
    fn name(&self, n: usize) -> String {
        let f = &self.files[n];
        if f.module.is_empty() {
            "(root)".into()
        } else {
            f.module.join("::") + if f.is_folder { "/" } else { "" }
        }
    }

    /// The strongly connected components with more than one file (Tarjan).
    fn circles(&self) -> Vec<Vec<usize>> {
        struct S<'g> {
            g: &'g Graph,
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        fn visit(s: &mut S<'_>, v: usize) {
            s.index[v] = Some(s.next);
            s.low[v] = s.next;
            s.next += 1;
            s.stack.push(v);
            s.on[v] = true;
            for &w in s.g.edges.get(&v).into_iter().flatten() {
                match s.index[w] {
                    None => {
                        visit(s, w);
                        s.low[v] = s.low[v].min(s.low[w]);
                    }
                    Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                    _ => {}
                }
            }
            if Some(s.low[v]) == s.index[v] {
                let mut c = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on[w] = false;
                    c.push(w);
                    if w == v {
                        break;
                    }
                }
                if c.len() > 1 {
                    c.sort();
                    s.out.push(c);
                }
            }
        }
        let n = self.files.len();
        let mut s = S {
            g: self,
            index: vec![None; n],
            low: vec![0; n],
            on: vec![false; n],
            stack: vec![],
            next: 0,
            out: vec![],
        };
        for v in 0..n {
            if s.index[v].is_none() {
                visit(&mut s, v);
            }
        }
        s.out.sort_by_key(|c| std::cmp::Reverse(c.len()));
        s.out
    }

    /// The declared layers of the folder `module` (its `mod.rs` doc),
    /// lowest first, each a list of children.
    fn layers(&self, folder: &[String]) -> Vec<Vec<String>> {
        let Some(f) = self
            .files
            .iter()
            .find(|f| f.is_folder && f.module == folder)
        else {
            return vec![];
        };
        f.text
            .lines()
            .find_map(|l| l.strip_prefix("// Layers, lowest first: "))
            .map(|l| {
                l.trim_end_matches('.')
                    .split(',')
                    .map(|level| {
                        level
                            .split_whitespace()
                            .map(|s| s.trim_matches('`').to_owned())
                            .collect()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The edges that run upward: into a facade from below it, or from a
    /// lower declared layer to a higher one. Each with the reason.
    fn upward(&self) -> Vec<(usize, usize, String)> {
        let mut out = Vec::new();
        for (&a, tos) in &self.edges {
            for &b in tos {
                let (fa, fb) = (&self.files[a], &self.files[b]);
                let common = fa
                    .module
                    .iter()
                    .zip(&fb.module)
                    .take_while(|(x, y)| x == y)
                    .count();
                if fb.is_folder && common == fb.module.len() {
                    out.push((
                        a,
                        b,
                        format!("names its own folder's facade `{}`", self.name(b)),
                    ));
                    continue;
                }
                if common == fa.module.len() || common == fb.module.len() {
                    continue; // a facade naming what is below it
                }
                let order = self.layers(&fa.module[..common]);
                let rank = |m: &ModPath| {
                    let at = |name: &str| {
                        order
                            .iter()
                            .position(|level| level.iter().any(|l| l == name))
                    };
                    at(&m[common]).or_else(|| at("*"))
                };
                if let (Some(ra), Some(rb)) = (rank(&fa.module), rank(&fb.module))
                    && ra < rb
                {
                    let folder = if common == 0 {
                        "src".into()
                    } else {
                        fa.module[..common].join("::")
                    };
                    out.push((
                        a,
                        b,
                        format!(
                            "`{}` is below `{}` in {folder}",
                            fa.module[common], fb.module[common]
                        ),
                    ));
                }
            }
        }
        out
    }
}

impl Graph {
    /// The children of each folder, lowest first (a topological order of
    /// the imports between them, ties by name), or `None` when they form a
    /// circle.
    fn folder_orders(&self) -> Vec<(ModPath, Option<Vec<String>>)> {
        let folders: BTreeSet<ModPath> = self
            .files
            .iter()
            .filter(|f| f.is_folder)
            .map(|f| f.module.clone())
            .collect();
        folders
            .into_iter()
            .map(|folder| {
                let depth = folder.len();
                let child = |m: &ModPath| {
                    (m.len() > depth && m[..depth] == folder[..]).then(|| m[depth].clone())
                };
                let children: BTreeSet<String> =
                    self.files.iter().filter_map(|f| child(&f.module)).collect();
                let mut below: BTreeMap<String, BTreeSet<String>> = children
                    .iter()
                    .map(|c| (c.clone(), BTreeSet::new()))
                    .collect();
                for (&a, tos) in &self.edges {
                    for &b in tos {
                        if let (Some(ca), Some(cb)) =
                            (child(&self.files[a].module), child(&self.files[b].module))
                            && ca != cb
                        {
                            below.get_mut(&ca).unwrap().insert(cb);
                        }
                    }
                }
                let mut order = Vec::new();
                while !below.is_empty() {
                    let ready: Vec<String> = below
                        .iter()
                        .filter(|(_, b)| b.is_empty())
                        .map(|(c, _)| c.clone())
                        .collect();
                    if ready.is_empty() {
                        return (folder, None);
                    }
                    for c in &ready {
                        below.remove(c);
                    }
                    for b in below.values_mut() {
                        for c in &ready {
                            b.remove(c);
                        }
                    }
                    order.push(ready.join(" "));
                }
                (folder, Some(order))
            })
            .collect()
    }
}

fn source_dir() -> PathBuf {
    std::env::var_os("TVM_FFI_LAYERS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_import_circle_and_every_import_runs_downward() {
    check_tree(&source_dir());
}

/// The same rules for the safe Rust API crate (`tvmffi/src`).
#[test]
fn the_safe_api_crate_is_layered_too() {
    check_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tvmffi/src"));
}

/// Prints the graph of the tree at `src` and fails on a circle, an upward
/// import or a read of a root item that is not a composition list.
fn check_tree(src: &Path) {
    let g = graph(src);
    let edges: usize = g.edges.values().map(BTreeSet::len).sum();
    println!("{} files, {} imports between files", g.files.len(), edges);
    let circles = g.circles();
    for c in &circles {
        println!(
            "circle of {} files: {}",
            c.len(),
            c.iter().map(|&n| g.name(n)).collect::<Vec<_>>().join(" ")
        );
        for &a in c {
            let inside: Vec<_> = g.edges[&a]
                .iter()
                .filter(|b| c.contains(b))
                .map(|&b| g.name(b))
                .collect();
            println!("  {} -> {}", g.name(a), inside.join(" "));
        }
    }
    for (folder, order) in g.folder_orders() {
        let name = if folder.is_empty() {
            "src".to_owned()
        } else {
            folder.join("::")
        };
        match order {
            Some(levels) => println!("{name}, lowest first: {}", levels.join(", ")),
            None => println!("{name}: its children form a circle"),
        }
    }
    let upward = g.upward();
    for (a, b, why) in &upward {
        println!("upward: {} -> {}: {why}", g.name(*a), g.name(*b));
    }
    for (a, item) in &g.composed {
        println!("composed at the root: {} reads `crate::{item}`", g.name(*a));
    }
    let bad_root: Vec<_> = g
        .composed
        .iter()
        .filter(|(_, item)| !item.starts_with("BUILTIN_"))
        .collect();
    println!(
        "summary: {} circles ({} files in them), {} upward imports",
        circles.len(),
        circles.iter().map(Vec::len).sum::<usize>(),
        upward.len()
    );
    assert!(
        circles.is_empty() && upward.is_empty() && bad_root.is_empty(),
        "the layering is broken; see above"
    );
}

/// The check itself, on a small tree with one of each fault: a circle, an
/// upward import between declared layers, a file naming its folder's
/// facade, and a read of a root item that is not a composition list.
#[test]
fn the_check_sees_each_kind_of_fault() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("layers-faults");
    let _ = fs::remove_dir_all(&root);
    let files = [
        (
            "lib.rs",
            "// Layers, lowest first: low, high.\nmod low;\nmod high;\npub(crate) const BUILTIN_X: u8 = 0;\npub(crate) const OTHER: u8 = 0;\n",
        ),
        (
            "low/mod.rs",
            "// Layers, lowest first: a, b c.\npub mod a;\npub mod b;\npub mod c;\npub use a::A;\n",
        ),
        (
            "low/a.rs",
            "use super::b::B; // upward: a is below b\npub struct A;\nfn f() -> u8 { crate::BUILTIN_X }\n",
        ),
        (
            "low/b.rs",
            "use super::c::{self, C}; // b and c: one layer, but a circle\npub struct B;\n",
        ),
        (
            "low/c.rs",
            "use crate::low::A; // the folder's own facade\nuse super::b::B;\npub struct C;\nfn g() -> u8 { crate::OTHER }\n",
        ),
        (
            "high/mod.rs",
            "use crate::low::{a::A, b::B}; // downward: fine\n#[cfg(test)]\nmod tests { use crate::high::*; }\n",
        ),
    ];
    for (path, text) in files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let g = graph(&root);
    let name = |n: usize| g.name(n);
    let circles: Vec<Vec<String>> = g
        .circles()
        .iter()
        .map(|c| c.iter().map(|&n| name(n)).collect())
        .collect();
    assert_eq!(circles, [vec!["low/", "low::a", "low::b", "low::c"]]);
    let upward: Vec<String> = g
        .upward()
        .iter()
        .map(|(a, b, why)| format!("{} -> {}: {why}", name(*a), name(*b)))
        .collect();
    assert_eq!(
        upward,
        [
            "low::a -> low::b: `a` is below `b` in low",
            "low::c -> low/: names its own folder's facade `low/`",
        ]
    );
    let composed: Vec<String> = g
        .composed
        .iter()
        .map(|(a, item)| format!("{} {item}", name(*a)))
        .collect();
    assert_eq!(composed, ["low::a BUILTIN_X", "low::c OTHER"]);
}
