//! `tvm-ffi-inspect FILE...`: what a shared library, object file or Model
//! Library Format tarball carries, without loading or running it: the
//! `__tvm_ffi_<name>` functions, the `__tvm_ffi__library_bin` tree (kinds,
//! payload sizes, imports), embedded cubins (`__tvm_ffi__cubin_<name>` /
//! `_end` pairs) and the artifacts of an exported artifact set.
//!
//! `tvm-ffi-inspect --extract DIR FILE` writes each artifact of FILE to
//! `DIR/<codegen_id>/<file_name>`, and nothing outside DIR; each file is
//! written new and renamed into place, never through what was there.
//! Paths are bytes (any name the system accepts); only regular files are
//! read, by mapping them.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;
use tvm_ffi::module::artifact::export::{extract, is_tarball, read_set};
use tvm_ffi::module::artifact::inspect::{kernels_of, summary};
use tvm_ffi::module::artifact::set::ArtifactSet;
use tvm_ffi::module::inspect::{inspect, map_file};

const USAGE: &str = "usage: tvm-ffi-inspect FILE...\n       tvm-ffi-inspect --extract DIR FILE\n       tvm-ffi-inspect --help | --version\n\n\
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
    for a in &artifacts {
        print!("    {}", summary(a));
    }
    for (kind, codegen_id, lines) in kernels_of(&artifacts) {
        println!("  {kind} kernels of {codegen_id}:");
        for line in lines {
            println!("    {line}");
        }
    }
}

/// Lists one file.
fn list(path: &Path) -> Result<(), String> {
    let data = map_file(path).map_err(|e| e.to_string())?;
    let set = read_set(path).map_err(|e| e.to_string());
    println!("{}:", path.display());
    if is_tarball(&data) {
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
                for line in &m.detail {
                    println!("        {line}");
                }
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
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--version") {
        println!(
            "tvm-ffi-inspect {} (TVM-FFI ABI {}.{})",
            env!("CARGO_PKG_VERSION"),
            tvm_ffi::abi::TVM_FFI_VERSION_MAJOR,
            tvm_ffi::abi::TVM_FFI_VERSION_MINOR
        );
        return ExitCode::SUCCESS;
    }
    if args.is_empty() {
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
                eprintln!("{}: error: {e}", Path::new(file).display());
                ExitCode::FAILURE
            }
        };
    }
    let mut status = ExitCode::SUCCESS;
    for path in &args {
        let path = Path::new(path);
        if let Err(e) = list(path) {
            eprintln!("{}: error: {e}", path.display());
            status = ExitCode::FAILURE;
        }
    }
    status
}
