//! What the integration tests share: a fresh directory for a test's files,
//! and starting a program built for the target. Under a cross runner (`tests/platforms/aarch64/run.sh` runs the tests with
//! qemu-aarch64), a child built for the target starts through the same
//! runner, named in `TVM_FFI_TEST_RUNNER` (program and arguments, split on
//! spaces).
#![allow(dead_code, reason = "each test uses a part")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh, empty directory `group/name` under cargo's scratch space for
/// integration tests.
pub fn workdir(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A command that runs `program`, a binary built for the target.
pub fn target_command(program: impl AsRef<OsStr>) -> Command {
    match std::env::var("TVM_FFI_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut cmd = Command::new(words.next().expect("a runner program"));
            cmd.args(words).arg(program);
            cmd
        }
        _ => Command::new(program),
    }
}

/// The C compiler for libraries this process loads (the library's own
/// choice: `$CC`, or the compiler for this architecture).
pub fn c_compiler() -> Command {
    Command::new(tvm_ffi::module::emit::c_compiler())
}
