//! The Rust side of the C++ layer (`src/cxx`), low level: the calls into it
//! (virtual methods of any module, making a module of a Rust kind) and the
//! callback table of a Rust kind's methods. The other table, the core
//! behind the exported C++ functions, is `cxx_core`'s, above the loader.
//! Every callback turns errors and panics into a raised error and a
//! nonzero code; every call into C++ turns a nonzero code back into an
//! [`Error`]. No exception or panic crosses in either direction.

use super::module::{Module, ModuleKind};
use crate::abi::*;
use crate::platform::panic::contain_panic;
use crate::runtime::model::boundary::{catch_or, catch_to_code};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::{Any, AnyView, Function, ObjectRef, value::seq};
use core::ffi::{CStr, c_char, c_int, c_void};
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use std::ffi::CString;

/// `TVMFFIRsKindOps` of `src/cxx/bridge.h`.
#[repr(C)]
struct KindOps {
    kind: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    property_mask: unsafe extern "C" fn(*mut c_void) -> i32,
    get_function: unsafe extern "C" fn(
        *mut c_void,
        *mut TVMFFIObject,
        *const TVMFFIAny,
        *mut *mut TVMFFIObject,
    ) -> c_int,
    implements_function:
        unsafe extern "C" fn(*mut c_void, *mut TVMFFIObject, *const TVMFFIAny, *mut i32) -> c_int,
    function_info:
        unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, i32, *mut TVMFFIAny) -> c_int,
    write_to_file: unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, *const TVMFFIAny) -> c_int,
    write_formats: unsafe extern "C" fn(*mut c_void, *mut *mut TVMFFIObject) -> c_int,
    save_to_bytes: unsafe extern "C" fn(*mut c_void, *mut TVMFFIAny) -> c_int,
    inspect_source: unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, *mut TVMFFIAny) -> c_int,
    drop: unsafe extern "C" fn(*mut c_void),
}
const _: () = assert!(size_of::<KindOps>() == 10 * size_of::<usize>());

unsafe extern "C" {
    fn tvm_ffi_rs_module_new(
        ops: *const KindOps,
        state: *mut c_void,
        out: *mut *mut TVMFFIObject,
    ) -> c_int;
    fn tvm_ffi_rs_module_kind(m: *mut TVMFFIObject, out: *mut *const c_char) -> c_int;
    fn tvm_ffi_rs_module_property_mask(m: *mut TVMFFIObject, out: *mut i32) -> c_int;
    fn tvm_ffi_rs_module_get_function(
        m: *mut TVMFFIObject,
        name: *const TVMFFIAny,
        out: *mut *mut TVMFFIObject,
    ) -> c_int;
    fn tvm_ffi_rs_module_implements_function(
        m: *mut TVMFFIObject,
        name: *const TVMFFIAny,
        out: *mut i32,
    ) -> c_int;
    fn tvm_ffi_rs_module_function_info(
        m: *mut TVMFFIObject,
        name: *const TVMFFIAny,
        doc: i32,
        out: *mut TVMFFIAny,
    ) -> c_int;
    fn tvm_ffi_rs_module_write_to_file(
        m: *mut TVMFFIObject,
        path: *const TVMFFIAny,
        format: *const TVMFFIAny,
    ) -> c_int;
    fn tvm_ffi_rs_module_write_formats(m: *mut TVMFFIObject, out: *mut *mut TVMFFIObject) -> c_int;
    fn tvm_ffi_rs_module_save_to_bytes(m: *mut TVMFFIObject, out: *mut TVMFFIAny) -> c_int;
    fn tvm_ffi_rs_module_inspect_source(
        m: *mut TVMFFIObject,
        format: *const TVMFFIAny,
        out: *mut TVMFFIAny,
    ) -> c_int;
    fn tvm_ffi_rs_module_import_module(m: *mut TVMFFIObject, other: *mut TVMFFIObject) -> c_int;
    fn tvm_ffi_rs_module_clear_imports(m: *mut TVMFFIObject) -> c_int;
    fn tvm_ffi_rs_module_lookup_from_imports(
        m: *mut TVMFFIObject,
        name: *const c_char,
        out: *mut *mut TVMFFIObject,
    ) -> c_int;
}

/// An error from a failed call into the C++ layer.
fn check(code: c_int) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::from_raised(code))
    }
}

/// A str cell for C++ `const String&` arguments.
fn string_arg(text: &str) -> Any {
    make_text(text.as_bytes(), TextKind::Str)
}

/// An owned object handle answered by C++ (NULL for none).
fn owned_object(ptr: *mut TVMFFIObject) -> Option<ObjectRef> {
    // SAFETY: the C++ layer hands over one reference of a live object.
    NonNull::new(ptr).map(|p| unsafe { ObjectRef::from_raw(p) })
}

/// The text of an owned `String`/`Optional<String>` answered by C++.
fn owned_text(raw: TVMFFIAny) -> Option<Vec<u8>> {
    // SAFETY: the C++ layer wrote an owned value.
    let value = unsafe { Any::from_raw(raw) };
    let view = value.view();
    view.as_str_bytes()
        .or_else(|| view.as_bytes())
        .map(<[u8]>::to_vec)
}

/// Virtual calls on a module (any `ModuleObj`, ours or foreign).
impl Module {
    /// `kind()`.
    pub fn kind_name(&self) -> Result<String> {
        let mut out: *const c_char = core::ptr::null();
        // SAFETY: a live module; `out` is writable.
        check(unsafe { tvm_ffi_rs_module_kind(self.handle(), &mut out) })?;
        if out.is_null() {
            return Err(Error::runtime("Module::kind() returned NULL"));
        }
        // SAFETY: `kind()` answers a NUL-terminated string living as long as the module.
        Ok(String::from_utf8_lossy(unsafe { CStr::from_ptr(out) }.to_bytes()).into_owned())
    }

    /// `GetPropertyMask()`.
    pub fn property_mask(&self) -> Result<i64> {
        let mut out = 0;
        // SAFETY: a live module; `out` is writable.
        check(unsafe { tvm_ffi_rs_module_property_mask(self.handle(), &mut out) })?;
        Ok(i64::from(out))
    }

    /// `GetFunction(name)`: this module only; `name` is a str value.
    pub fn own_function(&self, name: &Any) -> Result<Option<Function>> {
        let mut out = core::ptr::null_mut();
        // SAFETY: a live module, a String cell, a writable slot.
        check(unsafe {
            tvm_ffi_rs_module_get_function(self.handle(), name.view().raw(), &mut out)
        })?;
        owned_object(out)
            .map(|o| {
                Function::from_object(o)
                    .ok_or_else(|| Error::type_error("GetFunction returned a non-Function"))
            })
            .transpose()
    }

    /// `ImplementsFunction(name)`: this module only.
    pub fn own_implements(&self, name: &str) -> Result<bool> {
        let name = string_arg(name);
        let mut out = 0;
        // SAFETY: a live module, a String cell, a writable slot.
        check(unsafe {
            tvm_ffi_rs_module_implements_function(self.handle(), name.view().raw(), &mut out)
        })?;
        Ok(out != 0)
    }

    /// `GetFunctionDoc(name)` (`doc`) or `GetFunctionMetadata(name)`.
    pub fn own_function_info(&self, name: &str, doc: bool) -> Result<Option<Vec<u8>>> {
        let name = string_arg(name);
        let mut out = TVMFFIAny::NONE;
        // SAFETY: a live module, a String cell, a writable slot.
        check(unsafe {
            tvm_ffi_rs_module_function_info(self.handle(), name.view().raw(), doc.into(), &mut out)
        })?;
        Ok(owned_text(out))
    }

    /// `WriteToFile(path, format)`.
    pub fn write_to_file(&self, path: &str, format: &str) -> Result<()> {
        let (path, format) = (string_arg(path), string_arg(format));
        // SAFETY: a live module and two String cells.
        check(unsafe {
            tvm_ffi_rs_module_write_to_file(self.handle(), path.view().raw(), format.view().raw())
        })
    }

    /// `GetWriteFormats()`, an Array of str.
    pub fn write_formats(&self) -> Result<ObjectRef> {
        let mut out = core::ptr::null_mut();
        // SAFETY: a live module, a writable slot.
        check(unsafe { tvm_ffi_rs_module_write_formats(self.handle(), &mut out) })?;
        Ok(owned_object(out).unwrap_or_else(|| seq::new_array(Vec::new())))
    }

    /// `SaveToBytes()`.
    pub fn save_to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = TVMFFIAny::NONE;
        // SAFETY: a live module, a writable slot.
        check(unsafe { tvm_ffi_rs_module_save_to_bytes(self.handle(), &mut out) })?;
        owned_text(out).ok_or_else(|| Error::type_error("SaveToBytes did not return bytes"))
    }

    /// `InspectSource(format)`.
    pub fn inspect_source(&self, format: &str) -> Result<Vec<u8>> {
        let format = string_arg(format);
        let mut out = TVMFFIAny::NONE;
        // SAFETY: a live module, a String cell, a writable slot.
        check(unsafe {
            tvm_ffi_rs_module_inspect_source(self.handle(), format.view().raw(), &mut out)
        })?;
        Ok(owned_text(out).unwrap_or_default())
    }

    /// `ImportModule(other)` (the module's own, if it overrides it).
    pub fn import(&self, other: &Module) -> Result<()> {
        // SAFETY: two live modules.
        check(unsafe { tvm_ffi_rs_module_import_module(self.handle(), other.handle()) })
    }

    /// `ClearImports()` (the module's own, if it overrides it).
    pub fn clear_imports(&self) -> Result<()> {
        // SAFETY: a live module.
        check(unsafe { tvm_ffi_rs_module_clear_imports(self.handle()) })
    }

    /// `TVMFFIEnvModLookupFromImports`: the imports, then the global
    /// registry, cached by the module (under the reference's lock). The
    /// function is borrowed: the module's cache keeps it alive.
    pub fn lookup_from_imports(&self, name: &CStr) -> Result<NonNull<TVMFFIObject>> {
        let mut out = core::ptr::null_mut();
        // SAFETY: a live module, a NUL-terminated name, a writable slot.
        check(unsafe {
            tvm_ffi_rs_module_lookup_from_imports(self.handle(), name.as_ptr(), &mut out)
        })?;
        NonNull::new(out).ok_or_else(|| Error::runtime("lookup from imports answered NULL"))
    }
}

/// Making modules of a Rust kind.
impl Module {
    /// Makes a module of `kind` with no imports.
    pub fn new(kind: impl ModuleKind) -> Result<Module> {
        Self::of_kind(Box::new(kind))
    }

    fn of_kind(kind: Box<dyn ModuleKind>) -> Result<Module> {
        let name = CString::new(kind.kind())
            .map_err(|_| Error::value("a module kind name cannot contain NUL"))?;
        let state = Box::into_raw(Box::new(KindState { name, kind })).cast::<c_void>();
        let mut out = core::ptr::null_mut();
        // SAFETY: the table matches the C declaration; the C++ layer takes over
        // `state` (released through `drop`, also on failure).
        check(unsafe { tvm_ffi_rs_module_new(&KIND_OPS, state, &mut out) })?;
        let obj =
            owned_object(out).ok_or_else(|| Error::runtime("module creation answered NULL"))?;
        Module::from_object(obj)
    }
}

/// What a module of a Rust kind points to.
struct KindState {
    /// `kind()` as C text, alive as long as the module.
    name: CString,
    kind: Box<dyn ModuleKind>,
}

/// The kind state behind a callback's `state`.
///
/// # Safety
/// `state` is a `KindState` made by [`Module::of_kind`] and not yet dropped.
unsafe fn state<'a>(state: *mut c_void) -> &'a KindState {
    // SAFETY: per the contract.
    unsafe { &*state.cast::<KindState>() }
}

/// The text of a String argument cell.
///
/// # Safety
/// `cell` points to a live TVMFFIAny.
pub(crate) unsafe fn text_arg(cell: *const TVMFFIAny) -> Result<String> {
    // SAFETY: per the contract.
    let view = unsafe { AnyView::from_raw(&*cell) };
    view.as_str_bytes()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .ok_or_else(|| Error::type_error("expected a str argument"))
}

/// A module handle the C++ caller holds, borrowed for the call.
///
/// # Safety
/// `handle` is NULL or a live module object for the call.
pub(crate) unsafe fn module_arg(handle: *mut TVMFFIObject) -> Result<ManuallyDrop<Module>> {
    let handle = NonNull::new(handle).ok_or_else(|| Error::value("NULL module"))?;
    // SAFETY: per the contract.
    unsafe { Module::borrowed(handle) }
}

/// An optional function as an owned handle (NULL for none).
pub(crate) fn function_handle(f: Option<Function>) -> *mut TVMFFIObject {
    f.map_or(core::ptr::null_mut(), |f| f.into_object().into_raw_ptr())
}

/// Writes an optional text result.
pub(crate) fn write_text(out: *mut TVMFFIAny, text: Option<Vec<u8>>) {
    let value = text.map_or(Any::NONE, |t| make_text(&t, TextKind::Str));
    // SAFETY: the C++ caller passes a writable slot.
    unsafe { out.write(value.into_raw()) };
}

unsafe extern "C" fn kind_kind(s: *mut c_void) -> *const c_char {
    // SAFETY: the C++ layer passes the state it was made with.
    catch_or(c"".as_ptr(), || unsafe { state(s) }.name.as_ptr())
}

unsafe extern "C" fn kind_property_mask(s: *mut c_void) -> i32 {
    // SAFETY: as in `kind_kind`. The mask has three defined bits.
    catch_or(0, || unsafe { state(s) }.kind.property_mask() as i32)
}

unsafe extern "C" fn kind_get_function(
    s: *mut c_void,
    this: *mut TVMFFIObject,
    name: *const TVMFFIAny,
    out: *mut *mut TVMFFIObject,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: the C++ layer passes its state, itself, a String cell
        // and a writable slot.
        unsafe {
            let module = module_arg(this)?;
            let f = state(s).kind.get_function(&module, &text_arg(name)?)?;
            out.write(function_handle(f));
        }
        Ok(())
    })
}

unsafe extern "C" fn kind_implements_function(
    s: *mut c_void,
    this: *mut TVMFFIObject,
    name: *const TVMFFIAny,
    out: *mut i32,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `kind_get_function`.
        unsafe {
            let module = module_arg(this)?;
            let found = state(s)
                .kind
                .implements_function(&module, &text_arg(name)?)?;
            out.write(found.into());
        }
        Ok(())
    })
}

unsafe extern "C" fn kind_function_info(
    s: *mut c_void,
    name: *const TVMFFIAny,
    doc: i32,
    out: *mut TVMFFIAny,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `kind_get_function`.
        let (kind, name) = unsafe { (&state(s).kind, text_arg(name)?) };
        let info = if doc != 0 {
            kind.function_doc(&name)?
        } else {
            kind.function_metadata(&name)?
        };
        write_text(out, info);
        Ok(())
    })
}

unsafe extern "C" fn kind_write_to_file(
    s: *mut c_void,
    path: *const TVMFFIAny,
    format: *const TVMFFIAny,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `kind_get_function`.
        unsafe {
            state(s)
                .kind
                .write_to_file(&text_arg(path)?, &text_arg(format)?)
        }
    })
}

unsafe extern "C" fn kind_write_formats(s: *mut c_void, out: *mut *mut TVMFFIObject) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `kind_get_function`.
        let formats = unsafe { state(s) }.kind.write_formats();
        let array = seq::new_array(formats.iter().map(|f| string_arg(f)).collect());
        // SAFETY: a writable slot.
        unsafe { out.write(array.into_raw_ptr()) };
        Ok(())
    })
}

unsafe extern "C" fn kind_save_to_bytes(s: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `kind_get_function`.
        let bytes = unsafe { state(s) }.kind.save_to_bytes()?;
        // SAFETY: a writable slot.
        unsafe { out.write(make_text(&bytes, TextKind::Bytes).into_raw()) };
        Ok(())
    })
}

unsafe extern "C" fn kind_inspect_source(
    s: *mut c_void,
    format: *const TVMFFIAny,
    out: *mut TVMFFIAny,
) -> c_int {
    catch_to_code(|| {
        // SAFETY: as in `kind_get_function`.
        let text = unsafe { state(s).kind.inspect_source(&text_arg(format)?) };
        write_text(out, Some(text.into_bytes()));
        Ok(())
    })
}

unsafe extern "C" fn kind_drop(s: *mut c_void) {
    // SAFETY: called once, when the module dies; the state came from
    // `Box::into_raw` in `Module::of_kind`. A panicking Drop is contained (leaked).
    contain_panic(|| drop(unsafe { Box::from_raw(s.cast::<KindState>()) }));
}

static KIND_OPS: KindOps = KindOps {
    kind: kind_kind,
    property_mask: kind_property_mask,
    get_function: kind_get_function,
    implements_function: kind_implements_function,
    function_info: kind_function_info,
    write_to_file: kind_write_to_file,
    write_formats: kind_write_formats,
    save_to_bytes: kind_save_to_bytes,
    inspect_source: kind_inspect_source,
    drop: kind_drop,
};
