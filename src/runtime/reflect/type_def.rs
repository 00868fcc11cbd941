//! [`TypeDef`]: registering a reflected type (its metadata, fields,
//! methods and attributes) in one chain of calls, for the built-in types of
//! `reflected` and the types other layers add (artifacts).

use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{Described, Obj, ObjectT, Owned, Schema};
use crate::runtime::model::any::Any;
use crate::runtime::model::boundary::catch_to_code;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::new_object;
use crate::runtime::model::type_table::Table;
use crate::runtime::reflect::field::{self, Storage};
use core::ffi::c_int;

/// The payloads start right after the header.
const HEADER: i64 = size_of::<TVMFFIObject>() as i64;

/// A typed method of `key`: `<key>.<name>`.
pub fn method_name(key: &str, name: &str) -> &'static str {
    Box::leak(format!("{key}.{name}").into_boxed_str())
}

/// Registration of one type into the type table (held locked).
pub struct TypeDef<'t> {
    table: &'t mut Table,
    index: i32,
    key: &'static str,
}

impl<'t> TypeDef<'t> {
    /// Allocates `key` under `parent` (checking the reference's index).
    pub fn dynamic(
        table: &'t mut Table,
        key: &'static str,
        parent: i32,
        depth: i32,
        expect: i32,
    ) -> Self {
        let index = table
            .get_or_alloc(key.as_bytes(), -1, depth, 0, true, parent)
            .expect("registering a built-in reflected type");
        assert_eq!(index, expect, "{key} takes the reference's type index");
        TypeDef { table, index, key }
    }

    /// Allocates `key` under `parent` at the next free dynamic index (a type
    /// of this library that the reference does not have).
    pub fn fresh(table: &'t mut Table, key: &'static str, parent: i32, depth: i32) -> Result<Self> {
        let index = table.get_or_alloc(key.as_bytes(), -1, depth, 0, true, parent)?;
        Ok(TypeDef { table, index, key })
    }

    /// The type index being registered.
    pub fn index(&self) -> i32 {
        self.index
    }

    /// A static type that already exists.
    pub fn existing(table: &'t mut Table, key: &'static str, index: i32) -> Self {
        TypeDef { table, index, key }
    }

    /// Registers the type metadata: creator, total object size, structural
    /// equality/hash kind.
    pub fn metadata(
        &mut self,
        creator: TVMFFIObjectCreator,
        total_size: i32,
        seq_hash: i32,
    ) -> &mut Self {
        let meta = TVMFFITypeMetadata {
            doc: TVMFFIByteArray {
                data: core::ptr::null(),
                size: 0,
            },
            creator,
            total_size,
            structural_eq_hash_kind: seq_hash,
        };
        // Types without metadata yet; a second registration is a bug here.
        // SAFETY: a struct of our own making (no byte arrays to read).
        let _ = unsafe { self.table.register_metadata(self.index, &meta) };
        self
    }

    /// Registers a field at `offset` bytes into the payload (after the header).
    #[allow(clippy::too_many_arguments, reason = "one field record")]
    pub fn field(
        &mut self,
        name: &str,
        doc: &str,
        flags: i32,
        storage: Storage,
        offset: usize,
        static_type: i32,
        schema: Schema,
    ) -> &mut Self {
        let (size, alignment) = storage.size_align();
        let metadata = schema.metadata();
        let info = TVMFFIFieldInfo {
            name: bytes(name),
            doc: bytes(doc),
            metadata: bytes(&metadata),
            flags: i64::from(flags),
            size,
            alignment,
            offset: HEADER + offset as i64,
            getter: storage.getter(),
            setter: field::setter_of(storage),
            default_value_or_factory: TVMFFIAny::NONE,
            field_static_type_index: static_type,
        };
        // SAFETY: the names are our own strings; getter and setter ours.
        unsafe { self.table.register_field(self.index, &info) }.expect("a built-in field");
        self
    }

    /// Registers a method.
    pub fn method(&mut self, name: &str, doc: &str, flags: i32, d: Described) -> &mut Self {
        let value = Any::from(d.func.into_object());
        let info = TVMFFIMethodInfo {
            name: bytes(name),
            doc: bytes(doc),
            metadata: bytes(&d.metadata),
            flags: i64::from(flags),
            method: *value.view().raw(),
        };
        // SAFETY: our own strings and a live Function value.
        unsafe { self.table.register_method(self.index, &info) }.expect("a built-in method");
        self
    }

    /// Sets the type attribute `name`.
    pub fn attr(&mut self, name: &str, value: Any) -> &mut Self {
        self.table
            .register_attr(self.index, name.as_bytes(), value.view())
            .expect("a built-in type attribute");
        self
    }

    /// Sets the type attribute `name` to a function.
    pub fn attr_fn(&mut self, name: &str, f: Function) -> &mut Self {
        self.attr(name, Any::from(f.into_object()))
    }

    /// `__ffi_type_final__`.
    pub fn final_(&mut self, is_final: bool) -> &mut Self {
        self.attr("__ffi_type_final__", Any::from(is_final))
    }

    /// The attributes of a type with a creator: `__ffi_new__` and
    /// `__ffi_shallow_copy__` (a copy of `T`'s fields).
    pub fn creatable<T: Clone + Default + Send + Sync + 'static>(&mut self) -> &mut Self {
        let index = self.index;
        let new_fn = typed_fn!(
            method_name(self.key, "__ffi_new__"),
            || -> Owned<ObjectT> { Ok(Owned::new(new_object(index, T::default()))) }
        );
        self.attr_fn("__ffi_new__", new_fn.func);
        self.copyable::<T>()
    }

    /// `__ffi_shallow_copy__`: a new object with `T`'s fields cloned.
    pub fn copyable<T: Clone + Send + Sync + 'static>(&mut self) -> &mut Self {
        let index = self.index;
        let copy =
            typed_fn!(
                method_name(self.key, "__ffi_shallow_copy__"),
                |src: Obj<'_, ObjectT>| -> Owned<ObjectT> {
                    if src.type_index() != index {
                        return Err(Error::type_error(
                            "shallow copy of an object of another type",
                        ));
                    }
                    // SAFETY: objects of this type index have T's layout.
                    let fields = unsafe { src.payload::<T>() }.clone();
                    Ok(Owned::new(new_object(index, fields)))
                }
            );
        self.attr_fn("__ffi_shallow_copy__", copy.func)
    }

    /// A `__ffi_shallow_copy__` that refuses: for objects whose state cannot
    /// be copied (the reference copies the C++ base class only, leaving a
    /// visitor or mutator without the engine its vtable expects).
    pub fn uncopyable(&mut self) -> &mut Self {
        let key = self.key;
        let refuse = typed_fn!(method_name(key, "__ffi_shallow_copy__"), |_src: Obj<
            '_,
            ObjectT,
        >|
         -> Owned<
            ObjectT,
        > {
            Err(Error::type_error(format!(
                "`{key}` objects are traversal state and cannot be copied"
            )))
        });
        self.attr_fn("__ffi_shallow_copy__", refuse.func)
    }
}

impl TypeDef<'_> {
    /// An explicit `__ffi_init__`: a static method and the attribute.
    pub fn explicit_init(&mut self, d: Described, doc: &str) -> &mut Self {
        let f = d.func.clone();
        self.method(
            "__ffi_init__",
            doc,
            kTVMFFIFieldFlagBitMaskIsStaticMethod,
            d,
        );
        self.attr_fn("__ffi_init__", f)
    }
}

/// A byte array over a string that lives through the registration call
/// (the table copies it).
pub fn bytes(s: &str) -> TVMFFIByteArray {
    TVMFFIByteArray {
        data: s.as_ptr().cast(),
        size: s.len(),
    }
}

/// The `metadata.creator` of type `TI` with payload `T`.
///
/// # Safety
/// `out` is NULL or writable (the creator contract).
pub unsafe extern "C" fn create<T: Default + Send + Sync + 'static, const TI: i32>(
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    catch_to_code(|| {
        if out.is_null() {
            return Err(Error::value("creator: out is NULL"));
        }
        // SAFETY: checked non-null; the caller provides the slot.
        unsafe { out.write(new_object(TI, T::default()).into_raw_ptr().cast()) };
        Ok(())
    })
}
