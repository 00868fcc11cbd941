//! The object and dataclass globals frontends build objects with:
//! `ffi.MakeObjectFromPackedArgs`, `ffi._RegisterFFIInit` (the generated
//! `__ffi_init__` of a reflected type), and the support of Python-defined
//! types (`ffi.MakeFieldGetter`, `ffi.MakeFieldSetter`,
//! `ffi._PyClassRegisterTypeAttrColumns`: objects laid out from their
//! reflected fields, allocated and released here).

use crate::abi::*;
use crate::runtime::call::function::{Args, Function};
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{Obj, ObjectT, Owned};
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::type_table::{self, fields_with_ancestors, type_key_of};
use crate::runtime::reflect::field::{self, Storage, field_addr, field_name};
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

unsafe extern "C" {
    fn calloc(count: usize, size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
}

/// `CreateEmptyObject`: the native creator, else the `__ffi_new__` attribute.
pub fn create_empty(type_index: i32) -> Result<ObjectRef> {
    let facts = type_table::facts(type_index)?;
    if let Some(creator) = facts.creator {
        let mut handle: TVMFFIObjectHandle = core::ptr::null_mut();
        // SAFETY: a creator writes a new owned handle on success.
        let code = unsafe { creator(&mut handle) };
        if code != 0 {
            return Err(Error::from_raised(code));
        }
        let obj = NonNull::new(handle.cast::<TVMFFIObject>())
            .ok_or_else(|| Error::runtime("the type's creator returned NULL"))?;
        // SAFETY: the creator handed us its reference.
        return Ok(unsafe { ObjectRef::from_raw(obj) });
    }
    if let Some(new_fn) = facts
        .hook(type_table::Hook::New)
        .to_object()
        .and_then(Function::from_object)
    {
        return new_fn
            .call(&[])?
            .view()
            .to_object()
            .ok_or_else(|| Error::type_error("__ffi_new__ did not return an object"));
    }
    Err(Error::runtime(format!(
        "Type `{}` does not support reflection creation (no native creator or __ffi_new__ type attr)",
        type_key_of(type_index)
    )))
}

/// `ffi.MakeObjectFromPackedArgs(type, name0, value0, ...)`.
fn make_object_from_packed_args(args: Args<'_>) -> Result<Any> {
    if args.is_empty() {
        return Err(Error::type_error(
            "ffi.MakeObjectFromPackedArgs expects a type index or key first",
        ));
    }
    let first = args.get(0);
    let type_index = match first.as_i64() {
        Some(i) => i32::try_from(i).map_err(|_| Error::value(format!("invalid type index {i}")))?,
        None => {
            let key = first
                .as_str_bytes()
                .ok_or_else(|| field::convert_error(first, "str"))?;
            type_table::key_to_index(key)?
        }
    };
    // The reference fails an unexplained check here; ours says what is wrong.
    if args.len() % 2 != 1 {
        return Err(Error::new(
            ErrorKind::InternalError,
            format!(
                "ffi.MakeObjectFromPackedArgs expects a type then name/value pairs, got {} arguments",
                args.len()
            ),
        ));
    }
    let fields = fields_with_ancestors(type_index)?;
    let obj = create_empty(type_index)?;
    let mut keys = Vec::with_capacity(args.len() / 2);
    for i in (1..args.len()).step_by(2) {
        let k = args.get(i);
        keys.push(
            k.as_str_bytes()
                .ok_or_else(|| field::convert_error(k, "str"))?,
        );
    }
    let mut found = vec![false; keys.len()];
    for info in &fields {
        let name = field_name(info);
        let addr = field_addr(&obj, info);
        match (0..keys.len()).find(|&i| !found[i] && keys[i] == name) {
            Some(i) => {
                // SAFETY: `info` is a field of `obj`'s type.
                unsafe { field::call_setter(info, addr, args.get(2 * i + 2).raw())? };
                found[i] = true;
            }
            // SAFETY: as above.
            None => unsafe { field::set_missing(info, addr, type_index)? },
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Error::type_error(format!(
            "Type `{}` does not have field `{}`",
            type_key_of(type_index),
            String::from_utf8_lossy(keys[i])
        )));
    }
    Ok(Any::from(obj))
}

/// One field of a generated `__ffi_init__`.
struct InitField {
    info: TVMFFIFieldInfo,
    init: bool,
    kw_only: bool,
    has_default: bool,
}

/// What a generated `__ffi_init__` binds: every field, the positional ones
/// (required first), and names to fields.
struct InitPlan {
    type_index: i32,
    type_key: String,
    fields: Vec<InitField>,
    positional: Vec<usize>,
    by_name: HashMap<Vec<u8>, usize>,
}

// SAFETY: the field records point into the type table's pool (immutable,
// process-lifetime data) and at setters/defaults it keeps alive.
unsafe impl Send for InitPlan {}
// SAFETY: see `Send`.
unsafe impl Sync for InitPlan {}

impl InitPlan {
    fn new(type_index: i32) -> Result<InitPlan> {
        let has = |info: &TVMFFIFieldInfo, bit: i32| info.flags & i64::from(bit) != 0;
        let mut plan = InitPlan {
            type_index,
            type_key: type_key_of(type_index),
            fields: Vec::new(),
            positional: Vec::new(),
            by_name: HashMap::new(),
        };
        for info in fields_with_ancestors(type_index)? {
            let field = InitField {
                init: !has(&info, kTVMFFIFieldFlagBitMaskInitOff),
                kw_only: has(&info, kTVMFFIFieldFlagBitMaskKwOnly),
                has_default: has(&info, kTVMFFIFieldFlagBitMaskHasDefault),
                info,
            };
            let idx = plan.fields.len();
            if field.init {
                plan.by_name.insert(field_name(&field.info).to_vec(), idx);
                if !field.kw_only {
                    plan.positional.push(idx);
                }
            }
            plan.fields.push(field);
        }
        // Required fields come before those with defaults (stable).
        let fields = &plan.fields;
        plan.positional.sort_by_key(|&i| fields[i].has_default);
        Ok(plan)
    }

    fn error(&self, message: String) -> Error {
        Error::type_error(format!("{}.__ffi_init__() {message}", self.type_key))
    }

    /// Runs a setter, naming the field in its error as the reference does.
    fn set(&self, obj: &ObjectRef, fi: usize, value: Option<&TVMFFIAny>) -> Result<()> {
        let info = &self.fields[fi].info;
        let addr = field_addr(obj, info);
        // SAFETY: `info` is a field of `obj`'s type.
        let result = unsafe {
            match value {
                Some(v) => field::call_setter(info, addr, v),
                None => field::set_default(info, addr),
            }
        };
        result.map_err(|err| {
            let what = if value.is_some() {
                "field"
            } else {
                "default for field"
            };
            err.rewrap(|inner| {
                let mut message = format!(
                    "{}.__ffi_init__() {what} '{}'",
                    self.type_key,
                    String::from_utf8_lossy(field_name(info))
                );
                append_nested(&mut message, inner);
                message
            })
        })
    }

    /// `BindFieldArgs`: positional arguments, or positional ones up to the
    /// KWARGS marker followed by name/value pairs; then defaults.
    fn bind(&self, obj: &ObjectRef, args: Args<'_>) -> Result<()> {
        let kwargs = crate::runtime::model::object::kwargs_object();
        let marker = (0..args.len()).find(|&i| {
            args.get(i)
                .as_object_ptr()
                .is_some_and(|p| p.as_ptr() == kwargs.as_ptr())
        });
        let mut set = vec![false; self.fields.len()];
        let positional = marker.unwrap_or(args.len());
        if positional > self.positional.len() {
            return Err(self.error(format!(
                "takes at most {} positional argument(s), but {positional} were given",
                self.positional.len()
            )));
        }
        for (i, &fi) in self.positional.iter().take(positional).enumerate() {
            self.set(obj, fi, Some(args.get(i).raw()))?;
            set[fi] = true;
        }
        if let Some(marker) = marker {
            if !(args.len() - marker - 1).is_multiple_of(2) {
                return Err(
                    self.error("KWARGS requires an even number of key-value arguments".into())
                );
            }
            for i in (marker + 1..args.len()).step_by(2) {
                let k = args.get(i);
                let key = k
                    .as_str_bytes()
                    .ok_or_else(|| field::convert_error(k, "str"))?;
                let shown = String::from_utf8_lossy(key);
                let fi = *self.by_name.get(key).ok_or_else(|| {
                    self.error(format!("got an unexpected keyword argument '{shown}'"))
                })?;
                if set[fi] {
                    return Err(self.error(format!("got multiple values for argument '{shown}'")));
                }
                self.set(obj, fi, Some(args.get(i + 1).raw()))?;
                set[fi] = true;
            }
        }
        for (fi, field) in self.fields.iter().enumerate() {
            if set[fi] {
                continue;
            }
            if field.has_default {
                self.set(obj, fi, None)?;
            } else if field.init {
                let name = String::from_utf8_lossy(field_name(&field.info));
                let which = if field.kw_only { "keyword-only " } else { "" };
                return Err(self.error(format!("missing required {which}argument: '{name}'")));
            }
        }
        Ok(())
    }
}

/// Appends a nested error message the way the reference indents it.
fn append_nested(out: &mut String, message: &str) {
    out.push_str(":\n  ");
    out.push_str(&message.replace('\n', "\n  "));
}

/// `ffi._RegisterFFIInit(type_index)`: registers the generated
/// `__ffi_init__` of a reflected type.
pub fn register_ffi_init(type_index: i32) -> Result<()> {
    let plan = InitPlan::new(type_index)?;
    let init = Function::from_closure(move |args| {
        let obj = create_empty(plan.type_index)?;
        plan.bind(&obj, args)?;
        Ok(Any::from(obj))
    });
    let value = Any::from(init.into_object());
    type_table::register_attr(type_index, b"__ffi_init__", value.view())
}

/// The storage of every field of a Python-defined type, with its offset.
fn py_class_layout(type_index: i32) -> Result<Vec<(Storage, usize)>> {
    crate::runtime::model::type_table::facts(type_index)?
        .fields
        .iter()
        .map(|f| {
            Ok((
                Storage::of_static_type(f.field_static_type_index, f.size)?,
                f.offset as usize,
            ))
        })
        .collect()
}

/// [`py_class_layout`], checked to fit objects of `total_size` bytes after
/// the header, so that no field is written outside the allocation.
fn py_class_layout_within(type_index: i32, total_size: usize) -> Result<Vec<(Storage, usize)>> {
    let layout = py_class_layout(type_index)?;
    for &(storage, offset) in &layout {
        let end = offset.checked_add(storage.size_align().0 as usize);
        if offset < size_of::<TVMFFIObject>() || end.is_none_or(|e| e > total_size) {
            return Err(Error::value(format!(
                "a field of {} at offset {offset} does not fit in its total_size {total_size}",
                type_key_of(type_index)
            )));
        }
    }
    Ok(layout)
}

/// The deleter of Python-defined objects: releases the owning fields, then
/// frees the `calloc`'d memory.
unsafe extern "C" fn py_class_deleter(this: *mut c_void, flags: c_int) {
    crate::platform::panic::contain_panic(|| {
        if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
            // SAFETY: `this` is a live object header.
            let type_index = unsafe { (*this.cast::<TVMFFIObject>()).type_index };
            for (storage, offset) in py_class_layout(type_index).unwrap_or_default() {
                // SAFETY: the object was laid out from these fields and is
                // being destroyed; each field is released once.
                unsafe { storage.release(this.cast::<u8>().add(offset).cast()) };
            }
        }
        if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
            // SAFETY: the memory came from `calloc` in `py_class_alloc`.
            unsafe { free(this) };
        }
    });
}

/// A zeroed object of a Python-defined type (fields None / zero).
fn py_class_alloc(type_index: i32, total_size: usize) -> Result<ObjectRef> {
    if total_size < size_of::<TVMFFIObject>() {
        return Err(Error::value(format!(
            "total_size {total_size} of {} is smaller than an object header",
            type_key_of(type_index)
        )));
    }
    // SAFETY: plain allocation; checked below.
    let mem = unsafe { calloc(1, total_size) }.cast::<TVMFFIObject>();
    let mem = NonNull::new(mem).ok_or_else(|| {
        Error::runtime(format!(
            "Failed to allocate {total_size} bytes for type {}",
            type_key_of(type_index)
        ))
    })?;
    // SAFETY: fresh, zeroed, large enough for the header.
    unsafe {
        mem.as_ptr().write(TVMFFIObject {
            combined_ref_count: AtomicU64::new(crate::runtime::model::object::INITIAL_REF_COUNT),
            type_index,
            __padding: 0,
            deleter: Some(py_class_deleter),
        });
        Ok(ObjectRef::from_raw(mem))
    }
}

/// `ffi._PyClassRegisterTypeAttrColumns(type_index, total_size)`:
/// `__ffi_init__`, `__ffi_new__` and `__ffi_shallow_copy__` of a
/// Python-defined type.
fn py_class_register(type_index: i32, total_size: i32) -> Result<()> {
    let size = usize::try_from(total_size)
        .map_err(|_| Error::value(format!("invalid total_size {total_size}")))?;
    py_class_layout_within(type_index, size)?;
    register_ffi_init(type_index)?;
    let key = type_key_of(type_index);
    let new_name: &'static str = Box::leak(format!("{key}.__ffi_new__").into_boxed_str());
    let new_fn = typed_fn!(new_name, || -> Owned<ObjectT> {
        let layout = py_class_layout_within(type_index, size)?;
        let obj = py_class_alloc(type_index, size)?;
        for (storage, offset) in layout {
            // SAFETY: zeroed field storage inside the new object.
            unsafe { storage.init(obj.as_ptr().cast::<u8>().add(offset).cast()) };
        }
        Ok(Owned::new(obj))
    });
    let copy_name: &'static str = Box::leak(format!("{key}.__ffi_shallow_copy__").into_boxed_str());
    let copy_fn = typed_fn!(copy_name, |src: Obj<'_, ObjectT>| -> Owned<ObjectT> {
        if src.type_index() != type_index {
            return Err(Error::type_error(format!(
                "shallow copy of a `{}` as a `{}`",
                type_key_of(src.type_index()),
                type_key_of(type_index)
            )));
        }
        let layout = py_class_layout_within(type_index, size)?;
        let obj = py_class_alloc(type_index, size)?;
        for (storage, offset) in layout {
            let from = src
                .as_ptr()
                .cast::<u8>()
                .wrapping_add(offset)
                .cast::<c_void>();
            let to = obj
                .as_ptr()
                .cast::<u8>()
                .wrapping_add(offset)
                .cast::<c_void>();
            // SAFETY: both objects have this type's layout; `to` is zeroed.
            unsafe {
                storage.init(to);
                storage.write(to, storage.read(from).view())?;
            }
        }
        Ok(Owned::new(obj))
    });
    for (name, f) in [
        ("__ffi_new__", new_fn.func),
        ("__ffi_shallow_copy__", copy_fn.func),
    ] {
        let value = Any::from(f.into_object());
        type_table::register_attr(type_index, name.as_bytes(), value.view())?;
    }
    Ok(())
}

/// `ffi.MakeFieldSetter(field_type_index, type_converter, f_convert)`: a
/// Function `(field address, value)` that converts the value through the
/// frontend's C converter and writes it.
fn make_field_setter(field_type_index: i32, converter: i64, f_convert: i64) -> Result<Function> {
    type FConvert = unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, *mut TVMFFIAny) -> c_int;
    let storage = match Storage::of_static_type(field_type_index, 16) {
        Ok(s) => s,
        Err(_) => {
            return Err(Error::value(format!(
                "Unsupported field type index for setter: {field_type_index}"
            )));
        }
    };
    if f_convert == 0 {
        return Err(Error::value("ffi.MakeFieldSetter: f_convert is NULL"));
    }
    // SAFETY: the caller passes a converter function of this signature and
    // its opaque state (the contract of this global).
    let f_convert: FConvert = unsafe { core::mem::transmute(f_convert as usize) };
    let converter = converter as usize;
    Ok(Function::from_closure(move |args| {
        args.expect_len("ffi.MakeFieldSetter.<setter>", 2)?;
        let addr = args.get(0);
        let addr = addr
            .as_opaque_ptr()
            .filter(|p| !p.is_null())
            .ok_or_else(|| field::convert_error(addr, "void*"))?;
        let mut converted = TVMFFIAny::NONE;
        // SAFETY: per the contract above; the value is valid for the call.
        let code =
            unsafe { f_convert(converter as *mut c_void, args.get(1).raw(), &mut converted) };
        if code != 0 {
            return Err(Error::from_raised(code));
        }
        // SAFETY: a successful converter leaves an owned value.
        let value = unsafe { Any::from_raw(converted) };
        // SAFETY: the frontend hands the address of a field of this storage.
        unsafe { storage.write(addr, value.view())? };
        Ok(Any::NONE)
    }))
}

/// Registers the object and dataclass globals.
pub fn register(g: &mut Globals<'_>) {
    g.packed(
        "ffi.MakeObjectFromPackedArgs",
        Function::from_closure(make_object_from_packed_args),
    );
    g.add(typed_fn!("ffi._RegisterFFIInit", |type_index: i32| -> () {
        register_ffi_init(type_index)
    }));
    g.add(typed_fn!(
        "ffi.MakeFieldGetter",
        |field_type_index: i32| -> i64 {
            let storage = Storage::of_static_type(field_type_index, 16)?;
            let getter = storage.getter().expect("every storage has a getter");
            Ok(getter as usize as i64)
        }
    ));
    g.add(typed_fn! {
        "ffi.MakeFieldSetter",
        |field_type_index: i32, converter: i64, f_convert: i64| -> Function {
            make_field_setter(field_type_index, converter, f_convert)
        }
    });
    g.add(typed_fn!(
        "ffi._PyClassRegisterTypeAttrColumns",
        |type_index: i32, total_size: i32| -> () { py_class_register(type_index, total_size) }
    ));
}
