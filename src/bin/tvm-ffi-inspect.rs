//! `tvm-ffi-inspect FILE...`: lists the `__tvm_ffi_<name>` functions a shared
//! library or object file exports and decodes its `__tvm_ffi__library_bin`
//! (kinds, payload sizes, import tree), without loading or running it.
#![forbid(unsafe_code)]

use std::process::ExitCode;
use tvm_ffi::module::inspect::inspect;

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() || paths.iter().any(|p| p == "-h" || p == "--help") {
        eprintln!(
            "usage: tvm-ffi-inspect FILE...\n\nLists the __tvm_ffi_<name> functions of shared libraries or object\nfiles and decodes their __tvm_ffi__library_bin, without running them."
        );
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for path in &paths {
        let report = std::fs::read(path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|data| inspect(&data).map_err(|e| e.to_string()));
        match report {
            Ok(found) => {
                println!("{path}:");
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
            }
            Err(e) => {
                eprintln!("{path}: error: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
