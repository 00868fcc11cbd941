//! `tvm-ffi-inspect FILE...`: what a shared library, object file or Model
//! Library Format tarball carries, without loading or running it: the
//! `__tvm_ffi_<name>` functions, the `__tvm_ffi__library_bin` tree (kinds,
//! payload sizes, imports), embedded cubins (`__tvm_ffi__cubin_<name>` /
//! `_end` pairs) and the artifacts of an exported artifact set.
//!
//! `tvm-ffi-inspect --extract DIR FILE` writes each artifact of FILE to
//! `DIR/<codegen_id>/<file_name>`, and nothing outside DIR.
#![forbid(unsafe_code)]

use std::path::Path;
use std::process::ExitCode;
use tvm_ffi::module::artifact::ArtifactSet;
use tvm_ffi::module::artifact_export::{extract, read_set};
use tvm_ffi::module::artifact_inspect::summary;
use tvm_ffi::module::inspect::inspect;

const USAGE: &str = "usage: tvm-ffi-inspect FILE...\n       tvm-ffi-inspect --extract DIR FILE\n\n\
Lists the __tvm_ffi_<name> functions, the __tvm_ffi__library_bin tree, embedded\n\
cubins and the artifacts of shared libraries, object files and Model Library\n\
Format tarballs, without running them. --extract writes each artifact to\n\
DIR/<codegen_id>/<file_name>.";

/// Prints the artifacts of a set.
fn print_artifacts(set: &ArtifactSet) {
    let artifacts = set.artifacts();
    println!(
        "  artifacts ({}), model {}, made for TVM-FFI ABI {}:",
        artifacts.len(),
        set.model_name(),
        set.meta_str("tvm_ffi_abi").unwrap_or_default()
    );
    for a in artifacts {
        print!("    {}", summary(&a));
    }
}

/// Lists one file.
fn list(path: &str) -> Result<(), String> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let set = read_set(Path::new(path)).map_err(|e| e.to_string());
    println!("{path}:");
    if data.get(257..262) == Some(b"ustar") {
        println!("  Model Library Format tarball");
        print_artifacts(&set?.expect("a tarball holds a set"));
        return Ok(());
    }
    let found = inspect(&data).map_err(|e| e.to_string())?;
    println!("  functions ({}):", found.functions.len());
    for f in &found.functions {
        println!("    {f}");
    }
    match &found.library_bin {
        None => println!("  library_bin: none"),
        Some(modules) => {
            println!("  library_bin: {} module(s)", modules.len());
            for (i, m) in modules.iter().enumerate() {
                let size = if m.kind == "_lib" {
                    "the library itself".to_string()
                } else {
                    format!("{} bytes", m.size)
                };
                println!("    [{i}] {} ({size}) imports {:?}", m.kind, m.imports);
            }
        }
    }
    if !found.cubins.is_empty() {
        println!("  cubins ({}):", found.cubins.len());
        for (name, size) in &found.cubins {
            println!("    {name} ({size} bytes)");
        }
    }
    if let Some(set) = set? {
        print_artifacts(&set);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|p| p == "-h" || p == "--help") {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    if args[0] == "--extract" {
        let [_, dir, file] = args.as_slice() else {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        };
        let result = read_set(Path::new(file))
            .map_err(|e| e.to_string())
            .and_then(|set| set.ok_or_else(|| "records no artifact set".to_string()))
            .and_then(|set| extract(&set, Path::new(dir)).map_err(|e| e.to_string()));
        return match result {
            Ok(paths) => {
                for p in paths {
                    println!("{}", p.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{file}: error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut status = ExitCode::SUCCESS;
    for path in &args {
        if let Err(e) = list(path) {
            eprintln!("{path}: error: {e}");
            status = ExitCode::FAILURE;
        }
    }
    status
}
