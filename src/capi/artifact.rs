//! `TVMFFIArtifact*`: the typed C interface to artifacts
//! (`tvm/ffi/extra/artifact.h`) for C callers who would rather not call the
//! packed globals (`ffi.Artifact`, `ffi.ArtifactSet`, ...), which stay the
//! interface for other languages. Every handle out is a new reference;
//! release it with `TVMFFIArtifactRelease` (or `TVMFFIObjectDecRef`).

use super::args::{arg_cstr, arg_handle, arg_out, ffi_call, null_arg};
use crate::abi::*;
use crate::module::artifact::set::{Artifact, ArtifactSet, artifact_from_constants};
use crate::module::artifact::{export as artifact_export, load as artifact_load};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, make_text};
use core::ffi::{c_char, c_int, c_void};
use std::borrow::Cow;
use std::path::Path;

/// A borrowed handle as an object reference (a new strong reference).
///
/// # Safety
/// `p` is NULL or a live object.
unsafe fn borrowed(p: TVMFFIObjectHandle, name: &str) -> Result<ObjectRef> {
    let obj = arg_handle(p, name)?;
    // SAFETY: a live object per the contract.
    Ok(unsafe { ObjectRef::from_borrowed(obj) })
}

/// A NUL-terminated UTF-8 argument.
///
/// # Safety
/// `p` is NULL or NUL-terminated.
unsafe fn arg_text<'a>(p: *const c_char, name: &str) -> Result<&'a str> {
    // SAFETY: per the contract.
    let bytes = unsafe { arg_cstr(p, name) }?;
    core::str::from_utf8(bytes).map_err(|_| Error::value(format!("`{name}` is not UTF-8")))
}

/// A path argument (its bytes on Unix, UTF-8 on Windows).
///
/// # Safety
/// `p` is NULL or NUL-terminated.
unsafe fn arg_path<'a>(p: *const c_char, name: &str) -> Result<Cow<'a, Path>> {
    // SAFETY: per the contract.
    Ok(crate::platform::os::path_from_bytes(unsafe {
        arg_cstr(p, name)
    }?))
}

/// An optional `Map` handle named `name`.
///
/// # Safety
/// `p` is NULL or a live object.
unsafe fn optional_map(p: TVMFFIObjectHandle, name: &str) -> Result<Option<ObjectRef>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: per the contract.
    let m = unsafe { borrowed(p, name) }?;
    if m.type_index() != kTVMFFIMap {
        return Err(Error::type_error(format!(
            "`{name}` must be an ffi.Map, got {}",
            crate::runtime::model::type_table::type_key_of(m.type_index())
        )));
    }
    Ok(Some(m))
}

/// A set handle.
///
/// # Safety
/// `p` is NULL or a live object.
unsafe fn arg_set(p: TVMFFIObjectHandle) -> Result<ArtifactSet> {
    // SAFETY: per the contract.
    ArtifactSet::from_object(unsafe { borrowed(p, "set") }?)
}

/// Writes a set to a path with `write`.
///
/// # Safety
/// `set` is NULL or a live object; `path` is NULL or NUL-terminated.
unsafe fn write_set(
    set: TVMFFIObjectHandle,
    path: *const c_char,
    write: fn(&ArtifactSet, &Path) -> Result<()>,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (set, path) = unsafe { (arg_set(set)?, arg_path(path, "path")?) };
        write(&set, &path)
    })
}

/// Reads a set from a path with `read` into `*out`.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or writable.
unsafe fn read_set(
    path: *const c_char,
    out: *mut TVMFFIObjectHandle,
    read: fn(&Path) -> Result<ArtifactSet>,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (path, out) = unsafe { (arg_path(path, "path")?, arg_out(out, "out")?) };
        *out = read(&path)?.into_object().into_raw_ptr().cast();
        Ok(())
    })
}

/// Creates an artifact (`ffi.Artifact`) from `content_size` bytes at
/// `content` (NULL for none) and an optional `Map<str, Any>` of metadata.
/// Errors: ValueError for a NULL argument or a bad name, `sha256` or
/// metadata value (the message names the field).
///
/// # Safety
/// Strings are NUL-terminated; `content` holds `content_size` bytes;
/// `metadata` is NULL or a live object; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactCreate(
    codegen_id: *const c_char,
    loader: *const c_char,
    file_name: *const c_char,
    content: *const c_void,
    content_size: usize,
    metadata: TVMFFIObjectHandle,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { arg_out(out, "out") }?;
        if content.is_null() && content_size != 0 {
            return Err(null_arg("content"));
        }
        let bytes = if content_size == 0 {
            &[][..]
        } else {
            // SAFETY: non-NULL, `content_size` readable bytes per the contract.
            unsafe { core::slice::from_raw_parts(content.cast::<u8>(), content_size) }
        };
        // SAFETY: per the contract.
        let a = unsafe {
            Artifact::new(
                arg_text(codegen_id, "codegen_id")?,
                arg_text(loader, "loader")?,
                arg_text(file_name, "file_name")?,
                make_text(bytes, TextKind::Bytes),
                optional_map(metadata, "metadata")?.as_ref(),
            )
        }?;
        *out = a.into_object().into_raw_ptr().cast();
        Ok(())
    })
}

/// Creates a constants artifact (`ffi.ArtifactFromConstants`: loader
/// `constants`, format `params`) from a `Map<str, ffi.Tensor>` of CPU
/// tensors.
/// Errors: TypeError if a value is not a Tensor; ValueError for a tensor
/// off the CPU or not contiguous, or a bad name.
///
/// # Safety
/// Strings are NUL-terminated; `constants` is NULL or a live object; `out`
/// is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactFromConstants(
    codegen_id: *const c_char,
    file_name: *const c_char,
    constants: TVMFFIObjectHandle,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { arg_out(out, "out") }?;
        // SAFETY: per the contract.
        let constants = unsafe { optional_map(constants, "constants") }?
            .ok_or_else(|| null_arg("constants"))?;
        // SAFETY: per the contract.
        let a = unsafe {
            artifact_from_constants(
                arg_text(codegen_id, "codegen_id")?,
                arg_text(file_name, "file_name")?,
                &constants,
            )
        }?;
        *out = a.into_object().into_raw_ptr().cast();
        Ok(())
    })
}

/// Creates a set (`ffi.ArtifactSet`) of `num_artifacts` artifacts and an
/// optional `Map<str, Any>` of set metadata.
/// Errors: TypeError if an element is not an artifact; ValueError for a
/// duplicate `(codegen_id, file_name)` or a bad metadata value.
///
/// # Safety
/// `artifacts` holds `num_artifacts` live objects; `metadata` is NULL or a
/// live object; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactSetCreate(
    artifacts: *const TVMFFIObjectHandle,
    num_artifacts: usize,
    metadata: TVMFFIObjectHandle,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let out = unsafe { arg_out(out, "out") }?;
        if artifacts.is_null() && num_artifacts != 0 {
            return Err(null_arg("artifacts"));
        }
        let handles = if num_artifacts == 0 {
            &[][..]
        } else {
            // SAFETY: `num_artifacts` handles per the contract.
            unsafe { core::slice::from_raw_parts(artifacts, num_artifacts) }
        };
        let mut items = Vec::with_capacity(handles.len());
        for (i, &h) in handles.iter().enumerate() {
            // SAFETY: live objects per the contract.
            let obj = unsafe { borrowed(h, &format!("artifacts[{i}]")) }?;
            items.push(Artifact::from_object(obj)?);
        }
        // SAFETY: per the contract.
        let set = ArtifactSet::new(
            items,
            unsafe { optional_map(metadata, "metadata") }?.as_ref(),
        )?;
        *out = set.into_object().into_raw_ptr().cast();
        Ok(())
    })
}

/// Loads a set into a module tree (`ffi.ArtifactSetLoad`).
/// Errors: as `ffi.ArtifactSetLoad` (a missing loader, a compiler error,
/// constants without code or without `__init_constants`, a newer ABI).
///
/// # Safety
/// `set` is NULL or a live object; `out_module` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactSetLoad(
    set: TVMFFIObjectHandle,
    out_module: *mut TVMFFIObjectHandle,
) -> c_int {
    ffi_call(|| {
        // SAFETY: per the contract.
        let (set, out) = unsafe { (arg_set(set)?, arg_out(out_module, "out_module")?) };
        *out = artifact_load::load_set(&set)?
            .into_object()
            .into_raw_ptr()
            .cast();
        Ok(())
    })
}

/// Writes a set as one shared library at `path`
/// (`ffi.ArtifactSetExportLibrary`).
///
/// # Safety
/// `set` is NULL or a live object; `path` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactSetExportLibrary(
    set: TVMFFIObjectHandle,
    path: *const c_char,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { write_set(set, path, artifact_export::export_library) }
}

/// Writes a set as a Model Library Format tarball at `path`
/// (`ffi.ArtifactSetExportModelLibraryFormat`).
///
/// # Safety
/// `set` is NULL or a live object; `path` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactSetExportModelLibraryFormat(
    set: TVMFFIObjectHandle,
    path: *const c_char,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { write_set(set, path, artifact_export::export_model_library_format) }
}

/// Reads back the set recorded in a library exported by
/// `TVMFFIArtifactSetExportLibrary` (`ffi.ArtifactSetFromFile`), without
/// loading it.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactSetFromFile(
    path: *const c_char,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { read_set(path, out, artifact_export::set_from_file) }
}

/// Reads back a Model Library Format tarball
/// (`ffi.ArtifactSetFromModelLibraryFormat`); nothing is written to disk.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactSetFromModelLibraryFormat(
    path: *const c_char,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { read_set(path, out, artifact_export::set_from_model_library_format) }
}

/// Releases a handle this interface returned (an artifact, a set or a
/// module); NULL is ignored. The same as `TVMFFIObjectDecRef`.
///
/// # Safety
/// `handle` is NULL or a live object the caller owns a reference to.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TVMFFIArtifactRelease(handle: TVMFFIObjectHandle) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { super::object::TVMFFIObjectDecRef(handle) }
}
