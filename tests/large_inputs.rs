//! Inputs far larger or deeper than usual, through the algorithms that
//! once cost more than their input: `ffi.ReprPrint` of a 300,000-deep
//! chain, a library whose embedded tree has 100,000 imports (a star and a
//! chain, and 3,000 imports listed in reverse), a function looked up
//! through a 100,000-deep import chain, and exporting such a tree again.
//! Time is measured in benchmarks (`benches/large_inputs.py`), never here:
//! these check results and that nothing overflows the stack.

mod common;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use tvm_ffi::module::emit::build_shared_library;
use tvm_ffi::module::library_bin::{LibraryBin, ModuleEntry, write};
use tvm_ffi::module::{Module, ModuleKind, property};
use tvm_ffi::runtime::registry::{Registration, get_global, set_global};
use tvm_ffi::runtime::{Any, Function, Result, TextKind, make_text, new_list};

/// A fresh directory for this test's files.
fn workdir(name: &str) -> PathBuf {
    common::workdir("large-inputs", name)
}

#[test]
fn repr_of_a_300000_deep_chain() {
    let mut v = Any::from(new_list(Vec::new()));
    for _ in 0..300_000 {
        v = Any::from(new_list(vec![v]));
    }
    let repr = get_global(b"ffi.ReprPrint").unwrap();
    let text = repr.call(&[v.view()]).unwrap();
    let text = text.view().as_str_bytes().unwrap().to_vec();
    assert_eq!(text.len(), 600_002);
    assert!(text.starts_with(b"[[[[") && text.ends_with(b"]]]]"));
    // Releasing the chain recurses through the lists' deleters on a thread
    // with room for it.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || drop(v))
        .unwrap()
        .join()
        .unwrap();
}

/// A module kind with no functions: the nodes of the trees below.
struct Node;
impl ModuleKind for Node {
    fn kind(&self) -> &str {
        "large_inputs_node"
    }
    fn property_mask(&self) -> i64 {
        property::RUNNABLE
    }
    fn get_function(&self, _: &Module, _: &str) -> Result<Option<Function>> {
        Ok(None)
    }
    fn save_to_bytes(&self) -> Result<Vec<u8>> {
        Ok(Vec::new())
    }
}

/// Registers the loader of `large_inputs_node` entries (once).
fn register_node_loader() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let loader = Function::from_closure(|_| Ok(Any::from(Module::new(Node)?.into_object())));
        set_global(
            b"ffi.Module.load_from_bytes.large_inputs_node",
            loader,
            b"",
            false,
            Registration::Function,
        )
        .unwrap();
    });
}

/// Builds and loads a library whose embedded tree is `_lib` (entry 0)
/// and `n` entries of `kind`, with `imports` per entry.
fn try_load_tree(
    dir: &Path,
    name: &str,
    kind: &[u8],
    n: usize,
    imports: Vec<Vec<usize>>,
) -> Result<Module> {
    register_node_loader();
    let mut modules = vec![ModuleEntry {
        kind: b"_lib",
        payload: None,
    }];
    modules.extend((0..n).map(|_| ModuleEntry {
        kind,
        payload: Some(b""),
    }));
    let blob = write(&LibraryBin { modules, imports }).unwrap();
    let lib = dir.join(format!("{name}.so"));
    build_shared_library(&blob, &[], &lib).unwrap();
    tvm_ffi::module::load_from_file(lib.as_os_str().as_bytes())
}

fn load_tree(dir: &Path, name: &str, n: usize, imports: Vec<Vec<usize>>) -> Module {
    try_load_tree(dir, name, b"large_inputs_node", n, imports).unwrap()
}

/// How many modules the imports of `root` reach (itself included).
fn reachable(root: &Module) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.clone()];
    while let Some(m) = stack.pop() {
        if seen.insert(m.handle() as usize) {
            stack.extend(m.imports());
        }
    }
    seen.len()
}

#[test]
fn a_tree_of_100000_imports_loads_looks_up_and_exports() {
    let dir = workdir("trees");
    let n = 100_000;
    // A star: `_lib` imports every node.
    let star = load_tree(&dir, "star", n, {
        let mut imports = vec![(1..=n).collect()];
        imports.extend((0..n).map(|_| Vec::new()));
        imports
    });
    assert_eq!(star.imports().len(), n);
    // A chain: `_lib` imports node 1, node i imports node i + 1.
    let chain = load_tree(&dir, "chain", n, {
        let mut imports: Vec<Vec<usize>> = (0..n).map(|i| vec![i + 1]).collect();
        imports.push(Vec::new());
        imports
    });
    assert_eq!(reachable(&chain), n + 1);
    // 3,000 imports listed from the last node back to the first.
    let reversed = load_tree(&dir, "reversed", 3_000, {
        let mut imports = vec![vec![3_000]];
        imports.extend((1..=3_000).map(|i| if i > 1 { vec![i - 1] } else { Vec::new() }));
        imports
    });
    assert_eq!(reachable(&reversed), 3_001);
    // A lookup through the whole chain finds nothing, without overflowing.
    let name = make_text(b"not_there", TextKind::Str);
    assert!(chain.get_function_named(&name, true).unwrap().is_none());
    let implements = get_global(b"ffi.ModuleImplementsFunction").unwrap();
    let chain_any = Any::from(chain.as_object().clone());
    let found = implements
        .call(&[chain_any.view(), name.view(), Any::from(true).view()])
        .unwrap();
    assert_eq!(found.view().as_i64(), Some(0));
    // Exported again: the same shape.
    let blob = get_global(b"ffi.ModuleWriteToFile").unwrap();
    let out = dir.join("chain-again.bin");
    let path = make_text(out.as_os_str().as_bytes(), TextKind::Str);
    let format = make_text(b"library_bin", TextKind::Str);
    blob.call(&[chain_any.view(), path.view(), format.view()])
        .unwrap();
    assert!(std::fs::metadata(&out).unwrap().len() > n as u64);
    drop((star, chain, chain_any, reversed));
}

#[test]
fn a_cycle_made_by_a_loader_sharing_its_module_is_refused() {
    let dir = workdir("cycle");
    // Every entry of this kind is the same module: entry 1 importing entry
    // 2 makes it import itself.
    let shared = Module::new(Node).unwrap();
    let loader = Function::from_closure(move |_| Ok(Any::from(shared.as_object().clone())));
    set_global(
        b"ffi.Module.load_from_bytes.large_inputs_shared",
        loader,
        b"",
        false,
        Registration::Function,
    )
    .unwrap();
    let err = try_load_tree(
        &dir,
        "cycle",
        b"large_inputs_shared",
        2,
        vec![vec![1], vec![2], vec![]],
    )
    .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "RuntimeError: Cyclic dependency detected during import"
    );
}

/// A JSON graph of a chain of `n` Arrays as serializers write it (every
/// node after the one it refers to, the root last), or with `root_first`
/// the other way round.
fn chain_graph(n: usize, root_first: bool) -> String {
    let mut s = format!(
        "{{\"root_index\":{},\"nodes\":[",
        if root_first { 0 } else { n - 1 }
    );
    for i in 0..n {
        let leaf = if root_first { i + 1 == n } else { i == 0 };
        let child = if root_first { i + 1 } else { i.wrapping_sub(1) };
        if leaf {
            s.push_str("{\"type\":\"ffi.Array\",\"data\":[]},");
        } else {
            s.push_str(&format!("{{\"type\":\"ffi.Array\",\"data\":[{child}]}},"));
        }
    }
    s.pop();
    s.push_str("]}");
    s
}

/// Peak resident memory of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The child side of [`reading_a_deep_json_graph_costs_a_small_multiple_of_it`]:
/// reads a 10^6-deep chain and prints the peak memory it added, in KiB.
#[test]
fn json_graph_memory_probe() {
    let Ok(order) = std::env::var("LARGE_INPUTS_GRAPH") else {
        return;
    };
    let text = chain_graph(1_000_000, order == "root-first");
    let text = make_text(text.as_bytes(), TextKind::Str);
    let read = get_global(b"ffi.FromJSONGraphString").unwrap();
    let before = peak_rss_kib();
    let chain = read.call(&[text.view()]).unwrap();
    println!(
        "RESULT: input_kib={} added_kib={}",
        text.view().as_str_bytes().unwrap().len() / 1024,
        peak_rss_kib() - before
    );
    std::mem::forget(chain);
}

/// Runs the probe test `probe` in a child with `env` set and answers its
/// `RESULT:` line's `input_kib` and `added_kib`.
fn run_probe(probe: &str, env: (&str, &str)) -> (u64, u64) {
    let out = common::target_command(std::env::current_exe().unwrap())
        .args([probe, "--exact", "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.split_once("RESULT: ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no result: {text} {}", String::from_utf8_lossy(&out.stderr)));
    let num = |key: &str| -> u64 {
        let at = line.find(key).unwrap() + key.len();
        line[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (num("input_kib="), num("added_kib="))
}

/// Runs the JSON graph probe in a child: (input KiB, peak KiB added).
fn json_graph_memory(order: &str) -> (u64, u64) {
    run_probe("json_graph_memory_probe", ("LARGE_INPUTS_GRAPH", order))
}

/// Prints the figures: run with `--nocapture` to see them.
#[test]
fn reading_a_deep_json_graph_costs_a_small_multiple_of_it() {
    // As serializers write it: each node decoded as it is parsed.
    let (input, added) = json_graph_memory("serialized");
    println!("10^6-deep chain, serialized order: {input} KiB of JSON, {added} KiB added at peak");
    assert!(added < 5 * input, "{added} KiB for {input} KiB");
    // Root first: every node waits for the walk from the root.
    let (input, added) = json_graph_memory("root-first");
    println!("10^6-deep chain, root first: {input} KiB of JSON, {added} KiB added at peak");
    assert!(added < 10 * input, "{added} KiB for {input} KiB");
}

/// The child side of [`stringify_hands_back_its_output_without_a_copy`]:
/// stringifies 100 strings of 2 MiB and prints the peak memory added.
#[test]
fn stringify_memory_probe() {
    if std::env::var("LARGE_INPUTS_STRINGIFY").is_err() {
        return;
    }
    let items = (0..100)
        .map(|i| make_text(&vec![b'a' + (i % 26) as u8; 2 << 20], TextKind::Str))
        .collect();
    let array = Any::from(tvm_ffi::runtime::new_array(items));
    let stringify = get_global(b"ffi.json.Stringify").unwrap();
    let before = peak_rss_kib();
    let out = stringify.call(&[array.view(), Any::NONE.view()]).unwrap();
    println!(
        "RESULT: input_kib={} added_kib={}",
        out.view().as_str_bytes().unwrap().len() / 1024,
        peak_rss_kib() - before
    );
}

/// Prints the figures: run with `--nocapture` to see them.
#[test]
fn stringify_hands_back_its_output_without_a_copy() {
    let (output, added) = run_probe("stringify_memory_probe", ("LARGE_INPUTS_STRINGIFY", "1"));
    println!(
        "ffi.json.Stringify of 200 MiB of strings: {output} KiB out, {added} KiB added at peak"
    );
    // The output once (a copy would add it twice).
    assert!(added < output * 3 / 2, "{added} KiB for {output} KiB");
}

/// `ffi.json.Stringify` of a 3,000-deep chain of Arrays with indent 2: one
/// level per line, each indented by its depth (the output is quadratic in
/// the depth, as the reference's: 18 MB here, 1.8 GB at 30,000, written at
/// the speed of a memset of it, `benches/large_inputs.py`).
#[test]
fn stringify_of_a_deep_chain_indents_every_level() {
    let make = get_global(b"ffi.Array").unwrap();
    let mut v = make.call(&[]).unwrap();
    let depth = 3000usize;
    for _ in 0..depth {
        v = make.call(&[v.view()]).unwrap();
    }
    let stringify = get_global(b"ffi.json.Stringify").unwrap();
    let out = stringify.call(&[v.view(), Any::from(2i64).view()]).unwrap();
    let text = out.view().as_str_bytes().unwrap();
    // Levels 0..=depth: "[" and "]" each on a line of its own indented 2
    // per level (the empty innermost one too, as the reference writes it).
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 2 * (depth + 1));
    for level in 0..=depth {
        let indent = vec![b' '; 2 * level];
        assert_eq!(lines[level], [&indent[..], b"["].concat(), "line {level}");
        assert_eq!(lines[2 * depth + 1 - level], [&indent[..], b"]"].concat());
    }
}
