//! Module kinds implemented by C callbacks (`ffi.ModuleFromExternC`):
//!
//! ```c
//! // 0 on success; *out = a new Function reference, or NULL if absent.
//! int get_function(void* self, const char* name, TVMFFIObjectHandle* out);
//! // 0 on success; *out = owned Bytes (or String). May be NULL: unsupported.
//! int save_to_bytes(void* self, TVMFFIAny* out);
//! // Releases self when the module dies. May be NULL.
//! void deleter(void* self);
//! ```

use super::module::{Module, ModuleKind};
use crate::abi::*;
use crate::module::format::symbols::property;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::{Any, Function, ObjectRef};
use core::ffi::{c_char, c_int, c_void};
use std::ffi::CString;

type GetFunction =
    unsafe extern "C" fn(*mut c_void, *const c_char, *mut TVMFFIObjectHandle) -> c_int;
type SaveToBytes = unsafe extern "C" fn(*mut c_void, *mut TVMFFIAny) -> c_int;
type Deleter = unsafe extern "C" fn(*mut c_void);

/// A module kind whose behaviour lives in C.
pub struct ExternCModule {
    kind: String,
    this: *mut c_void,
    get_function: GetFunction,
    save_to_bytes: Option<SaveToBytes>,
    deleter: Option<Deleter>,
}

// SAFETY: the C side promises its callbacks may run on any thread, as for
// every TVM-FFI function.
unsafe impl Send for ExternCModule {}
// SAFETY: see `Send`.
unsafe impl Sync for ExternCModule {}

impl Drop for ExternCModule {
    fn drop(&mut self) {
        if let Some(d) = self.deleter {
            // SAFETY: runs exactly once, when the module dies.
            unsafe { d(self.this) };
        }
    }
}

impl ExternCModule {
    /// Wraps C callbacks; `get_function` is required.
    ///
    /// # Safety
    /// The pointers are NULL or functions of the signatures above.
    pub unsafe fn new(
        kind: String,
        this: *mut c_void,
        get_function: *mut c_void,
        save: *mut c_void,
        deleter: *mut c_void,
    ) -> Result<Self> {
        if get_function.is_null() {
            return Err(Error::value("ffi.ModuleFromExternC: get_function is NULL"));
        }
        // SAFETY: per the contract.
        unsafe {
            Ok(ExternCModule {
                kind,
                this,
                get_function: core::mem::transmute::<*mut c_void, GetFunction>(get_function),
                save_to_bytes: core::mem::transmute::<*mut c_void, Option<SaveToBytes>>(save),
                deleter: core::mem::transmute::<*mut c_void, Option<Deleter>>(deleter),
            })
        }
    }
}

impl ModuleKind for ExternCModule {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn property_mask(&self) -> i64 {
        property::RUNNABLE
            | if self.save_to_bytes.is_some() {
                property::BINARY_SERIALIZABLE
            } else {
                0
            }
    }
    fn get_function(&self, _module: &Module, name: &str) -> Result<Option<Function>> {
        let name =
            CString::new(name).map_err(|_| Error::value("function names cannot contain NUL"))?;
        let mut out: TVMFFIObjectHandle = core::ptr::null_mut();
        // SAFETY: the callback follows the documented contract.
        let code = unsafe { (self.get_function)(self.this, name.as_ptr(), &mut out) };
        if code != 0 {
            return Err(Error::from_raised(code));
        }
        let Some(obj) = core::ptr::NonNull::new(out.cast()) else {
            return Ok(None);
        };
        // SAFETY: the callback handed us a new reference.
        let obj = unsafe { ObjectRef::from_raw(obj) };
        Function::from_object(obj)
            .map(Some)
            .ok_or_else(|| Error::type_error("get_function returned a non-Function"))
    }
    fn save_to_bytes(&self) -> Result<Vec<u8>> {
        let Some(save) = self.save_to_bytes else {
            return Err(Error::runtime(format!(
                "Module[{}] does not support SaveToBytes",
                self.kind
            )));
        };
        let mut out = TVMFFIAny::NONE;
        // SAFETY: the callback follows the documented contract.
        let code = unsafe { save(self.this, &mut out) };
        if code != 0 {
            return Err(Error::from_raised(code));
        }
        // SAFETY: an owned value per the contract.
        let out = unsafe { Any::from_raw(out) };
        let view = out.view();
        let bytes = view.as_bytes().or_else(|| view.as_str_bytes());
        bytes
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::type_error("save_to_bytes must return bytes"))
    }
}
