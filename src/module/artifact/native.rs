//! Native artifacts (loader `native`: format `c` sources and `o` host
//! objects) compiled and linked into one shared library with the system C
//! compiler. Sources see the TVM-FFI C headers this library ships (written
//! next to them), so generated code needs no installed headers.
#![forbid(unsafe_code)]

use crate::module::artifact::set::Artifact;
use crate::module::load::emit::run_c_compiler;
use crate::runtime::model::error::{Error, Result};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The loader name of native artifacts.
pub const NATIVE_LOADER: &str = "native";

/// The C headers sources may include, by their include path.
const HEADERS: [(&str, &str); 3] = [
    (
        "tvm/ffi/c_api.h",
        include_str!("../../../include/tvm/ffi/c_api.h"),
    ),
    (
        "tvm/ffi/extra/c_env_api.h",
        include_str!("../../../include/tvm/ffi/extra/c_env_api.h"),
    ),
    (
        "dlpack/dlpack.h",
        include_str!("../../../include/dlpack/dlpack.h"),
    ),
];

/// Writes `bytes` to `path`, creating its directory.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::runtime(format!("cannot create {}: {e}", parent.display())))?;
    }
    std::fs::write(path, bytes)
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

/// Compiles and links the native `artifacts` and `extra_objects` into the
/// shared library `output` (an absolute path), working in `dir` (a scratch
/// directory). Each artifact is written to
/// `dir/artifacts/<codegen_id>/<file_name>` (names were checked when the
/// artifact was made, so they stay inside `dir`) and named
/// `./<codegen_id>/<file_name>` to the compiler, so its messages name the
/// artifact and no name can pass for an option.
pub(crate) fn build_native_library(
    dir: &Path,
    artifacts: &[Artifact],
    extra_objects: &[&Path],
    output: &Path,
) -> Result<()> {
    let include = dir.join("include");
    for (name, text) in HEADERS {
        write_file(&include.join(name), text.as_bytes())?;
    }
    let (mut sources, mut objects): (Vec<PathBuf>, Vec<PathBuf>) = (Vec::new(), Vec::new());
    for a in artifacts {
        let path = Path::new(".").join(a.codegen_id()).join(a.file_name());
        write_file(&dir.join("artifacts").join(&path), a.content())?;
        match a.format().as_deref() {
            Some("c") => sources.push(path),
            Some("o") => objects.push(path),
            other => {
                return Err(Error::value(format!(
                    "native artifact \"{}/{}\" has format {}; native artifacts are \"c\" sources or \"o\" objects",
                    a.codegen_id(),
                    a.file_name(),
                    other.map_or("(none)".into(), |f| format!("\"{f}\""))
                )));
            }
        }
    }
    let os = OsStr::new;
    let mut args: Vec<&OsStr> = vec![
        os("-shared"),
        os("-fPIC"),
        os("-O2"),
        os("-I"),
        include.as_os_str(),
        os("-o"),
        output.as_os_str(),
    ];
    if !sources.is_empty() {
        args.extend([os("-x"), os("c")]);
        args.extend(sources.iter().map(|p| p.as_os_str()));
        args.extend([os("-x"), os("none")]);
    }
    args.extend(objects.iter().map(|p| p.as_os_str()));
    args.extend(extra_objects.iter().map(|p| p.as_os_str()));
    run_c_compiler(&args, Some(&dir.join("artifacts")))
}
