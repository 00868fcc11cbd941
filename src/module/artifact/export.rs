//! Artifact sets on disk as shared libraries: `ffi.ArtifactSetExportLibrary`
//! links the native artifacts into one library and records the whole set
//! (as an `ffi.ArtifactSet` module entry, see `set_record`) in its
//! `__tvm_ffi__library_bin`; `ffi.ArtifactSetFromFile` reads the set back
//! with `object`, never `dlopen`. The Model Library Format tarball of a
//! set (`mlf`) is written and read here as well.
#![forbid(unsafe_code)]

use crate::module::artifact::bootstrap;
use crate::module::artifact::cuda;
use crate::module::artifact::native::{NATIVE_LOADER, build_native_library};
use crate::module::artifact::set::{Artifact, ArtifactSet, ArtifactSetT};
use crate::module::format::cuda_blob;
use crate::module::format::inspect::embedded_library_bin;
use crate::module::format::library_bin::{self, LIB_KIND, LibraryBin, ModuleEntry};
use crate::module::load::emit::{check_operand, to_object_file, with_scratch_dir};
use crate::module::{artifact::mlf, artifact::set_record};
use crate::platform::image::map_file;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{Obj, Owned, Str};
use crate::runtime::model::error::{Error, Result};
use std::path::Path;

/// The `__tvm_ffi__library_bin` of an exported set: the library itself
/// (`_lib`, the root), importing one `cuda` module per CUDA `codegen_id`
/// (TVM's serialized module, so TVM's runtime loads them too), and the set
/// record, which the root does not import (loading attaches it instead,
/// see `load::attach`).
pub(crate) fn library_bin_of(set: &ArtifactSet) -> Result<Vec<u8>> {
    let record = set_record::encode(set)?;
    let cuda: Vec<Vec<u8>> = cuda::blobs(&set.artifacts())?
        .iter()
        .map(|(_, blob)| cuda_blob::encode(blob))
        .collect();
    let mut modules = vec![ModuleEntry {
        kind: LIB_KIND,
        payload: None,
    }];
    modules.extend(cuda.iter().map(|payload| ModuleEntry {
        kind: b"cuda",
        payload: Some(payload),
    }));
    modules.push(ModuleEntry {
        kind: library_bin::SET_RECORD_KIND.as_bytes(),
        payload: Some(&record),
    });
    let mut imports = vec![(1..=cuda.len()).collect::<Vec<usize>>()];
    imports.extend((0..=cuda.len()).map(|_| Vec::new()));
    let tree = LibraryBin { modules, imports };
    library_bin::write(&tree).map_err(Error::from)
}

/// The codegen directory the constants bootstrap is compiled in.
const BOOTSTRAP_CODEGEN: &str = "_tvm_ffi_rs_bootstrap";

/// `ffi.ArtifactSetExportLibrary`: one shared library at `path`, with the
/// constants bootstrap (`bootstrap`) linked in.
pub fn export_library(set: &ArtifactSet, path: &Path) -> Result<()> {
    check_operand("output", path)?;
    let mut native: Vec<_> = set
        .artifacts()
        .into_iter()
        .filter(|a| a.loader() == NATIVE_LOADER)
        .collect();
    let blob = library_bin_of(set)?;
    // Compiled with the native code, not part of the set.
    native.push(
        Artifact::builder(BOOTSTRAP_CODEGEN, NATIVE_LOADER, "constants_bootstrap.c")
            .content(bootstrap::source(set, &blob)?.as_bytes())
            .format("c")
            .build()?,
    );
    let output = std::path::absolute(path)
        .map_err(|e| Error::runtime(format!("cannot resolve {}: {e}", path.display())))?;
    with_scratch_dir(|dir| {
        let bin_obj = dir.join("library_bin.o");
        std::fs::write(&bin_obj, to_object_file(&blob)?)
            .map_err(|e| Error::runtime(format!("cannot write {}: {e}", bin_obj.display())))?;
        build_native_library(dir, &native, &[bin_obj.as_path()], &output)
    })
}

/// `ffi.ArtifactSetFromFile`: the set recorded in a library or object file,
/// read without loading it (contents are copied out of the file).
pub(crate) fn set_from_file(path: &Path) -> Result<ArtifactSet> {
    let data = map_file(path)?;
    let none = || {
        Error::value(format!(
            "{} records no artifact set (it has no {} entry in its __tvm_ffi__library_bin)",
            path.display(),
            library_bin::SET_RECORD_KIND
        ))
    };
    let blob = embedded_library_bin(&data)?.ok_or_else(none)?;
    let tree = library_bin::parse(blob)?;
    let record = tree.set_record().ok_or_else(none)?;
    set_record::decode(record)
}

/// `ffi.ArtifactSetExportModelLibraryFormat`: the tarball at `path`.
pub fn export_model_library_format(set: &ArtifactSet, path: &Path) -> Result<()> {
    std::fs::write(path, mlf::export(set)?)
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

/// `ffi.ArtifactSetFromModelLibraryFormat`: the set of the tarball at
/// `path` (a regular file, mapped and read in memory).
pub(crate) fn set_from_model_library_format(path: &Path) -> Result<ArtifactSet> {
    mlf::import(&map_file(path)?)
}

/// The artifact set a file holds: a Model Library Format tarball, or a
/// library or object file recording one; None for a file with no set.
pub fn read_set(path: &Path) -> Result<Option<ArtifactSet>> {
    set_in(&map_file(path)?)
}

/// Whether `data` is a tarball (POSIX says `ustar` at byte 257).
pub fn is_tarball(data: &[u8]) -> bool {
    data.get(257..262) == Some(b"ustar")
}

/// The artifact set the bytes of a file hold (as [`read_set`]).
pub fn set_in(data: &[u8]) -> Result<Option<ArtifactSet>> {
    if is_tarball(data) {
        return mlf::import(data).map(Some);
    }
    match embedded_library_bin(data)? {
        None => Ok(None),
        Some(blob) => {
            let tree = library_bin::parse(blob)?;
            tree.set_record().map(set_record::decode).transpose()
        }
    }
}

/// Writes each artifact of `set` to `dir/<codegen_id>/<file_name>` and
/// returns the paths. Nothing is written outside `dir`, and nothing through
/// what was already there: names are single path components (checked when
/// each artifact was made), an existing `<codegen_id>` that is not a plain
/// directory (a symbolic link) is refused, and each file is written new
/// (`O_CREAT|O_EXCL|O_NOFOLLOW` under a random name) then renamed over its
/// name, which replaces an existing entry (a hard link to another file, a
/// symbolic link, a FIFO) instead of writing through it.
pub fn extract(set: &ArtifactSet, dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let io = |what: &Path, e: std::io::Error| {
        Error::runtime(format!("cannot write {}: {e}", what.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut written = Vec::new();
    for a in set.artifacts() {
        let sub = dir.join(a.codegen_id());
        match std::fs::symlink_metadata(&sub) {
            Ok(m) if !m.file_type().is_dir() => {
                return Err(Error::value(format!(
                    "{} exists and is not a directory (a link is not followed)",
                    sub.display()
                )));
            }
            Ok(_) => {}
            Err(_) => std::fs::create_dir(&sub).map_err(|e| io(&sub, e))?,
        }
        let path = sub.join(a.file_name());
        write_new(&path, a.content()).map_err(|e| io(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes `bytes` to a file created new beside `path`, then renames it to
/// `path`: whatever `path` named before is replaced, never written through.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::hash::{BuildHasher, Hasher};
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut attempt = 0u32;
    let (temp, mut file) = loop {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(attempt);
        let temp = dir.join(format!(".tvm-ffi-extract-{:016x}", h.finish()));
        match crate::platform::os::create_new_file(&temp, 0o644) {
            Ok(file) => break (temp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 64 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let done = file
        .write_all(bytes)
        .and_then(|()| std::fs::rename(&temp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    done
}

/// Registers the export and read-back globals.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    let path_arg = |s: &Str<'_>| crate::platform::os::path_from_bytes(s.0).into_owned();
    g.add(typed_fn! {
        "ffi.ArtifactSetExportLibrary",
        |set: Obj<'_, ArtifactSetT>, path: Str<'_>| -> () {
            export_library(&ArtifactSet::from_object((*set).clone())?, &path_arg(&path))
        }
    });
    g.add(typed_fn!(
        "ffi.ArtifactSetExportModelLibraryFormat",
        |set: Obj<'_, ArtifactSetT>, path: Str<'_>| -> () {
            export_model_library_format(
                &ArtifactSet::from_object((*set).clone())?,
                &path_arg(&path),
            )
        }
    ));
    g.add(typed_fn!(
        "ffi.ArtifactSetFromModelLibraryFormat",
        |path: Str<'_>| -> Owned<ArtifactSetT> {
            Ok(Owned::new(
                set_from_model_library_format(&path_arg(&path))?.into_object(),
            ))
        }
    ));
    g.add(typed_fn!(
        "ffi.ArtifactSetFromFile",
        |path: Str<'_>| -> Owned<ArtifactSetT> {
            Ok(Owned::new(set_from_file(&path_arg(&path))?.into_object()))
        }
    ));
}
