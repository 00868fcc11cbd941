//! Inputs far larger or deeper than usual, through the algorithms that
//! once cost more than their input: `ffi.ReprPrint` of a 300,000-deep
//! chain, a library whose embedded tree has 100,000 imports (a star and a
//! chain, and 3,000 imports listed in reverse), a function looked up
//! through a 100,000-deep import chain, and exporting such a tree again.
//! Time is measured in benchmarks (`benches/large_inputs.py`), never here:
//! these check results and that nothing overflows the stack.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use tvm_ffi::core::registry::{Registration, get_global, set_global};
use tvm_ffi::core::{Any, Function, Result, TextKind, make_text, new_list};
use tvm_ffi::module::emit::build_shared_library;
use tvm_ffi::module::library_bin::{LibraryBin, ModuleEntry, write};
use tvm_ffi::module::{Module, ModuleKind, property};

/// A fresh directory for this test's files.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("large-inputs")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
    .err()
    .expect("refused");
    assert_eq!(
        err.to_string(),
        "RuntimeError: Cyclic dependency detected during import"
    );
}
