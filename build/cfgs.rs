//! Step 5: the conditions the sources name once instead of spelling the
//! target each time, as `--cfg`s of this package (a build script is what
//! sets a cfg for one package's compilation):
//!
//! - `tvm_ffi_sysv64`: x86-64 with the System V calling convention (every
//!   x86-64 system but Windows): `TVMFFIFunctionCall` is a five-instruction
//!   tail call in assembly that leaves the arguments in their registers;
//! - `tvm_ffi_fast_call`: x86-64 Linux, where in addition the thread's
//!   stack floor is known (`platform::stack`): the extern-C call path's
//!   trampolines check the recursion limit and the stack in assembly.
//!
//! A port to another system reads these two lines.

/// Declares both cfgs and sets those the target meets.
pub fn emit() {
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    println!("cargo::rustc-check-cfg=cfg(tvm_ffi_sysv64)");
    println!("cargo::rustc-check-cfg=cfg(tvm_ffi_fast_call)");
    if arch == "x86_64" && os != "windows" {
        println!("cargo::rustc-cfg=tvm_ffi_sysv64");
    }
    if arch == "x86_64" && os == "linux" {
        println!("cargo::rustc-cfg=tvm_ffi_fast_call");
    }
}
