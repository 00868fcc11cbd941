//! The type table: type key → index allocation, `TVMFFITypeInfo` records with
//! ancestors, reflected fields and methods, metadata, and attribute columns.
//!
//! Every record, string and value handed out stays at a fixed address for
//! the life of the process, because C and C++ code caches the pointers.
//!
//! One file (about 900 lines): the records, the columns and the lock that
//! guards them keep one invariant, that nothing handed out ever moves.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::lineage::MAX_TYPE_INDEX;
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::std_hash;
use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard};

/// One registered type. `info` comes first so a pointer to the entry is a
/// pointer to its `TVMFFITypeInfo`.
#[repr(C)]
struct Entry {
    info: TVMFFITypeInfo,
    ancestors: Vec<*const TVMFFITypeInfo>,
    fields: Vec<TVMFFIFieldInfo>,
    methods: Vec<TVMFFIMethodInfo>,
    metadata: Option<Box<TVMFFITypeMetadata>>,
    /// Slots reserved for the type and its children.
    num_slots: i32,
    /// Slots of that range already handed out (the type itself counts).
    allocated_slots: i32,
    child_slots_can_overflow: bool,
}

/// An attribute column: the C view plus the values it points to.
struct Column {
    c: TVMFFITypeAttrColumn,
    data: Vec<Any>,
}

/// The type table. Outside this module it is only reachable, mutably, by
/// the registration of the built-in reflected types while the table is made.
pub struct Table {
    entries: Vec<Option<Box<Entry>>>,
    by_key: HashMap<Box<[u8]>, i32>,
    next_dynamic: i32,
    /// Boxed: C keeps pointers to the columns while the vector grows.
    #[allow(clippy::vec_box, reason = "stable addresses handed to C")]
    columns: Vec<Box<Column>>,
    column_by_name: HashMap<Box<[u8]>, usize>,
    /// Strings and values copied from registrations, kept forever.
    strings: StringPool,
    values: Vec<Any>,
}

/// Strings kept for the rest of the process, packed into chunks that never
/// move: a registration copies its names without an allocation each.
#[derive(Default)]
struct StringPool {
    chunks: Vec<Vec<u8>>,
}

impl StringPool {
    /// Bytes per chunk (a longer string gets a chunk of its own).
    const CHUNK: usize = 16 << 10;

    /// Keeps `s` followed by a NUL; the address of the kept copy, stable
    /// for the pool's life (a chunk is never grown past its capacity, so
    /// it never moves).
    fn keep(&mut self, s: &[u8]) -> *const u8 {
        let need = s.len() + 1;
        if self
            .chunks
            .last()
            .is_none_or(|c| c.capacity() - c.len() < need)
        {
            self.chunks.push(Vec::with_capacity(need.max(Self::CHUNK)));
        }
        let chunk = self.chunks.last_mut().expect("a chunk was just ensured");
        // A string handed back from the pool itself (a caller re-registering
        // a name it read from the table) is copied out first: the chunk is
        // written while `s` is read.
        let owned;
        let s = if chunk.as_ptr_range().contains(&s.as_ptr()) {
            owned = s.to_vec();
            &owned[..]
        } else {
            s
        };
        let start = chunk.len();
        chunk.extend_from_slice(s);
        chunk.push(0);
        chunk[start..].as_ptr()
    }
}

// SAFETY: the raw pointers in the table point into boxes the table owns (or
// into `'static` data); all access goes through the mutex.
unsafe impl Send for Table {}

static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(|| Mutex::new(Table::with_builtins()));

// Every mutation leaves the table consistent, so a poisoned lock is reusable.
fn table() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Bumped by every change a [`Facts`] record could miss (a new type, field,
/// metadata or attribute), so the per-thread caches start afresh.
static GENERATION: AtomicU64 = AtomicU64::new(0);

fn changed() {
    GENERATION.fetch_add(1, Ordering::Release);
}

/// The type attributes the structural traversals consult at every node.
#[derive(Clone, Copy)]
pub enum Hook {
    /// `__s_equal__`.
    SEqual,
    /// `__s_hash__`.
    SHash,
    /// `__s_visit__`.
    SVisit,
    /// `__s_mutate__`.
    SMutate,
    /// `__s_maybe_inplace_mutate__`.
    SMaybeInplaceMutate,
    /// `__ffi_shallow_copy__`.
    ShallowCopy,
    /// `__ffi_new__`.
    New,
    /// `__data_to_json__`.
    DataToJson,
    /// `__data_from_json__`.
    DataFromJson,
}

const HOOK_NAMES: [&str; 9] = [
    "__s_equal__",
    "__s_hash__",
    "__s_visit__",
    "__s_mutate__",
    "__s_maybe_inplace_mutate__",
    "__ffi_shallow_copy__",
    "__ffi_new__",
    "__data_to_json__",
    "__data_from_json__",
];

/// What the traversals read about a type at every node: read once per
/// thread (and again after the table changes), then without the lock.
pub struct Facts {
    /// `structural_eq_hash_kind`; None when the type has no metadata.
    pub kind: Option<i32>,
    /// The fields, the ancestors' first.
    pub fields: Box<[TVMFFIFieldInfo]>,
    /// The hash of the type key (`GetTypeKeyHash`).
    pub key_hash: u64,
    /// The native creator (`metadata.creator`), if any.
    pub creator: TVMFFIObjectCreator,
    /// The [`Hook`] attributes (None when unset), borrowed from the table:
    /// a set attribute is never replaced, so the table owns it for good.
    hooks: [TVMFFIAny; HOOK_NAMES.len()],
}

impl Facts {
    /// The value of attribute `hook` (None when unset).
    pub fn hook(&self, hook: Hook) -> AnyView<'_> {
        // SAFETY: the table keeps set attributes alive for the process.
        unsafe { AnyView::from_raw(&self.hooks[hook as usize]) }
    }
}

type FactsCache = (
    u64,
    crate::platform::address_map::AddrMap<i32, std::rc::Rc<Facts>>,
);

thread_local! {
    static FACTS: core::cell::RefCell<FactsCache> = core::cell::RefCell::new(Default::default());
}

/// The [`Facts`] of `type_index` (an error for an unknown type index).
pub fn facts(type_index: i32) -> Result<std::rc::Rc<Facts>> {
    let generation = GENERATION.load(Ordering::Acquire);
    // `try_with`: deleters may ask while the thread's locals are torn down.
    let cached = FACTS
        .try_with(|c| {
            let mut c = c.borrow_mut();
            if c.0 != generation {
                *c = (generation, Default::default());
            }
            c.1.get(&type_index).cloned()
        })
        .ok()
        .flatten();
    if let Some(f) = cached {
        return Ok(f);
    }
    let facts = std::rc::Rc::new({
        let mut t = table();
        let entry = t.entry_mut(type_index)?;
        let kind = entry.metadata.as_ref().map(|m| m.structural_eq_hash_kind);
        let creator = entry.metadata.as_ref().and_then(|m| m.creator);
        let key_hash = entry.info.type_key_hash;
        let fields = t.fields_with_ancestors(type_index)?.into_boxed_slice();
        let hooks = HOOK_NAMES.map(|name| {
            t.column_by_name
                .get(name.as_bytes())
                .and_then(|&c| {
                    let slot = usize::try_from(type_index).ok()?;
                    t.columns[c].data.get(slot).map(|v| *v.view().raw())
                })
                .unwrap_or(TVMFFIAny::NONE)
        });
        Facts {
            kind,
            fields,
            key_hash,
            creator,
            hooks,
        }
    });
    let _ = FACTS.try_with(|c| {
        let mut c = c.borrow_mut();
        if c.0 == generation {
            c.1.insert(type_index, facts.clone());
        }
    });
    Ok(facts)
}

/// Runs `f` with the type table locked (to register a type in one go).
/// `f` must not call back into the table's free functions.
pub fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    f(&mut table())
}

/// The POD type keys, index = type index.
const POD_KEYS: [&str; 14] = [
    "None",
    "int",
    "bool",
    "float",
    "void*",
    "DataType",
    "Device",
    "DLTensor*",
    "const char*",
    "TVMFFIByteArray*",
    "ObjectRValueRef",
    "ffi.SmallStr",
    "ffi.SmallBytes",
    "ffi.Unchanged",
];

/// The built-in depth-1 object types, in the reference's registration order,
/// with the object size of those the reference gives metadata.
const OBJECT_KEYS: [(&str, i32, Option<i32>); 14] = [
    ("ffi.String", kTVMFFIStr, None),
    ("ffi.BigInt", kTVMFFIBigInt, Some(32)),
    ("ffi.Bytes", kTVMFFIBytes, None),
    ("ffi.Error", kTVMFFIError, None),
    ("ffi.Function", kTVMFFIFunction, None),
    ("ffi.Shape", kTVMFFIShape, None),
    ("ffi.Tensor", kTVMFFITensor, None),
    ("ffi.Array", kTVMFFIArray, None),
    ("ffi.List", kTVMFFIList, None),
    ("ffi.Map", kTVMFFIMap, None),
    ("ffi.Dict", kTVMFFIDict, None),
    ("ffi.Module", kTVMFFIModule, Some(48)),
    ("ffi.OpaquePyObject", kTVMFFIOpaquePyObject, None),
    ("ffi.VisitInterrupt", kTVMFFIVisitInterrupt, None),
];

/// The attribute columns the reference declares at start-up (C++ readers
/// such as `AnyHash` and the reflection creator consult them directly).
const DECLARED_COLUMNS: [&str; 19] = [
    "__ffi_convert__",
    "__ffi_type_final__",
    "__ffi_new__",
    "__ffi_init__",
    "__ffi_shallow_copy__",
    "__ffi_repr__",
    "__any_hash__",
    "__any_equal__",
    "__s_visit__",
    "__s_mutate__",
    "__s_maybe_inplace_mutate__",
    "__data_to_json__",
    "__data_from_json__",
    "__ffi_eq__",
    "__ffi_hash__",
    "__ffi_compare__",
    "__s_equal__",
    "__s_hash__",
    "__ffi_enum__",
];

/// Attribute columns grow up to this many slots: a bound on what a hostile
/// type index can make us allocate (16 MiB per column).
const MAX_COLUMN_SLOTS: usize = 1 << 20;

/// Metadata of a built-in type: no doc, no creator, not structural.
fn builtin_metadata(total_size: i32) -> TVMFFITypeMetadata {
    TVMFFITypeMetadata {
        doc: TVMFFIByteArray {
            data: core::ptr::null(),
            size: 0,
        },
        creator: None,
        total_size,
        structural_eq_hash_kind: kTVMFFISEqHashKindUnsupported,
    }
}

impl Table {
    fn with_builtins() -> Table {
        let mut t = Table {
            entries: (0..kTVMFFIDynObjectBegin).map(|_| None).collect(),
            by_key: HashMap::new(),
            next_dynamic: kTVMFFIDynObjectBegin,
            columns: Vec::new(),
            column_by_name: HashMap::new(),
            strings: StringPool::default(),
            values: Vec::new(),
        };
        let builtin = |t: &mut Table, key: &str, index, depth, can_overflow, parent| {
            t.get_or_alloc(key.as_bytes(), index, depth, 0, can_overflow, parent)
                .expect("built-in type registration cannot fail");
        };
        builtin(&mut t, "ffi.Object", kTVMFFIObject, 0, true, -1);
        let meta = builtin_metadata(size_of::<TVMFFIObject>() as i32);
        // SAFETY: metadata of our own making.
        unsafe { t.register_metadata(kTVMFFIObject, &meta) }.expect("first metadata of ffi.Object");
        for (index, key) in POD_KEYS.iter().enumerate() {
            builtin(&mut t, key, index as i32, 0, false, -1);
        }
        for (key, index, size) in OBJECT_KEYS {
            builtin(&mut t, key, index, 1, false, kTVMFFIObject);
            if let Some(size) = size {
                // SAFETY: metadata of our own making.
                unsafe { t.register_metadata(index, &builtin_metadata(size)) }
                    .expect("first metadata");
            }
        }
        for column in DECLARED_COLUMNS {
            t.register_attr(kTVMFFINone, column.as_bytes(), AnyView::none())
                .expect("declaring a column");
        }
        // The layers above describe their built-in types; the crate root
        // composes the list, so this layer names none of them.
        for register in crate::BUILTIN_TYPES {
            register(&mut t);
        }
        t
    }

    fn entry_mut(&mut self, type_index: i32) -> Result<&mut Entry> {
        usize::try_from(type_index)
            .ok()
            .and_then(|i| self.entries.get_mut(i))
            .and_then(|e| e.as_deref_mut())
            .ok_or_else(|| {
                // The reference prints this check and aborts; ours raises it.
                Error::new(
                    ErrorKind::InternalError,
                    format!(
                        "Check failed: (entry != nullptr) is false: Cannot find type info for \
                         type_index={type_index}"
                    ),
                )
            })
    }

    /// See the public function of the same name.
    fn fields_with_ancestors(&mut self, type_index: i32) -> Result<Vec<TVMFFIFieldInfo>> {
        let entry = self.entry_mut(type_index)?;
        let mut out = Vec::new();
        for &ancestor in entry.ancestors.iter().skip(1) {
            // SAFETY: ancestors point to boxed entries that are never freed,
            // whose field vectors are only changed under the lock we hold.
            let info = unsafe { &*ancestor };
            if info.num_fields > 0 {
                // SAFETY: as above; `fields` holds `num_fields` records.
                out.extend_from_slice(unsafe {
                    core::slice::from_raw_parts(info.fields, info.num_fields as usize)
                });
            }
        }
        out.extend_from_slice(&entry.fields);
        Ok(out)
    }

    /// See the public function of the same name.
    pub fn get_or_alloc(
        &mut self,
        key: &[u8],
        static_index: i32,
        depth: i32,
        num_child_slots: i32,
        mut can_overflow: bool,
        parent_index: i32,
    ) -> Result<i32> {
        if let Some(&index) = self.by_key.get(key) {
            return Ok(index);
        }
        changed();
        if parent_index == -2 {
            return Ok(-2);
        }
        let key_text = String::from_utf8_lossy(key);
        if num_child_slots < 0 {
            return Err(Error::value(format!(
                "type `{key_text}`: negative num_child_slots"
            )));
        }
        let parent_ptr: Option<*const Entry> = if parent_index < 0 {
            None
        } else {
            Some(self.entry_mut(parent_index)? as *const Entry)
        };
        let (parent_depth, parent_ancestors) = match parent_ptr {
            // SAFETY: entries are boxed and never freed; no other borrow is live.
            Some(p) => unsafe { ((*p).info.type_depth, (*p).ancestors.clone()) },
            None => (-1, Vec::new()),
        };
        if depth != parent_depth + 1 {
            return Err(Error::value(format!(
                "type `{key_text}`: depth {depth} is not its parent's depth + 1 ({})",
                parent_depth + 1
            )));
        }
        let index = if static_index >= 0 {
            match self.entries.get(static_index as usize) {
                Some(None) => static_index,
                Some(Some(other)) => {
                    return Err(Error::value(format!(
                        "Conflicting static index {static_index} between {} and {key_text}",
                        // SAFETY: the key is stored in the table's string pool.
                        String::from_utf8_lossy(unsafe {
                            crate::runtime::model::bytes::byte_slice(other.info.type_key)
                        })
                    )));
                }
                None => {
                    return Err(Error::value(format!(
                        "type `{key_text}`: static index {static_index} is not below {kTVMFFIDynObjectBegin}"
                    )));
                }
            }
        } else {
            let parent = self.entry_mut(parent_index).map_err(|_| {
                Error::value(format!("type `{key_text}`: a dynamic type needs a parent"))
            })?;
            let slots = num_child_slots
                .checked_add(1)
                .ok_or_else(|| Error::value("num_child_slots overflows"))?;
            if parent
                .allocated_slots
                .checked_add(slots)
                .is_some_and(|n| n <= parent.num_slots)
            {
                let index = parent.info.type_index + parent.allocated_slots;
                parent.allocated_slots += slots;
                index
            } else if parent.child_slots_can_overflow {
                let index = self.next_dynamic;
                // Bounded (2^20 indices), as a hostile `num_child_slots`
                // would otherwise size the table to gigabytes.
                self.next_dynamic = index
                    .checked_add(slots)
                    .filter(|&n| n <= MAX_TYPE_INDEX)
                    .ok_or_else(|| {
                        Error::runtime(format!(
                            "type `{key_text}`: the type index space is exhausted \
                             ({slots} slots asked, {} left of {MAX_TYPE_INDEX})",
                            MAX_TYPE_INDEX - index
                        ))
                    })?;
                self.entries
                    .resize_with(self.next_dynamic as usize, || None);
                index
            } else {
                return Err(Error::runtime(format!(
                    "Reach maximum number of sub-classes for {}",
                    // SAFETY: the key is stored in the table's string pool.
                    String::from_utf8_lossy(unsafe {
                        crate::runtime::model::bytes::byte_slice(parent.info.type_key)
                    })
                )));
            }
        };
        if let Some(p) = parent_ptr {
            // SAFETY: as above.
            if !unsafe { (*p).child_slots_can_overflow } {
                can_overflow = false;
            }
        }
        let mut ancestors = parent_ancestors;
        if let Some(p) = parent_ptr {
            ancestors.push(p.cast::<TVMFFITypeInfo>());
        }
        let type_key = self.copy_string(key);
        let mut entry = Box::new(Entry {
            info: TVMFFITypeInfo {
                type_index: index,
                type_depth: depth,
                type_key,
                type_ancestors: core::ptr::null(),
                type_key_hash: std_hash::string_hash(key),
                num_fields: 0,
                num_methods: 0,
                fields: core::ptr::null(),
                methods: core::ptr::null(),
                metadata: core::ptr::null(),
            },
            ancestors,
            fields: Vec::new(),
            methods: Vec::new(),
            metadata: None,
            num_slots: num_child_slots + 1,
            allocated_slots: 1,
            child_slots_can_overflow: can_overflow,
        });
        entry.info.type_ancestors = entry.ancestors.as_ptr();
        let lineage: Vec<i32> = entry
            .ancestors
            .iter()
            // SAFETY: ancestors point to boxed entries that are never freed.
            .map(|&a| unsafe { (*a).type_index })
            .collect();
        crate::runtime::model::lineage::publish(index, &lineage);
        self.entries[index as usize] = Some(entry);
        self.by_key.insert(key.into(), index);
        Ok(index)
    }

    /// Copies a string into the pool; empty strings become (NULL, 0).
    fn copy_string(&mut self, s: &[u8]) -> TVMFFIByteArray {
        if s.is_empty() {
            return TVMFFIByteArray {
                data: core::ptr::null(),
                size: 0,
            };
        }
        TVMFFIByteArray {
            data: self.strings.keep(s).cast(),
            size: s.len(),
        }
    }

    /// Copies a value into the pool and returns a view of the kept copy.
    fn keep_value(&mut self, value: AnyView<'_>) -> Result<TVMFFIAny> {
        let owned = value.to_owned_any()?;
        let view = *owned.view().raw();
        self.values.push(owned);
        Ok(view)
    }

    fn copy_text(&mut self, arr: &TVMFFIByteArray) -> TVMFFIByteArray {
        // SAFETY: the C caller passes valid byte arrays in its info structs
        // (which may point into the pool: kept strings never move).
        let bytes = unsafe { crate::runtime::model::bytes::byte_slice(*arr) };
        self.copy_string(bytes)
    }

    /// See the public function of the same name.
    ///
    /// # Safety
    /// As for the public function.
    pub unsafe fn register_field(&mut self, type_index: i32, info: &TVMFFIFieldInfo) -> Result<()> {
        changed();
        // The type is checked before anything `info` points to is read.
        let entry = self.entry_mut(type_index)?;
        // SAFETY: see `copy_text`.
        let name = unsafe { crate::runtime::model::bytes::byte_slice(info.name) };
        let same_name = |f: &TVMFFIFieldInfo| {
            // SAFETY: stored names live in the pool.
            (unsafe { crate::runtime::model::bytes::byte_slice(f.name) }) == name
        };
        if entry.fields.iter().any(same_name) {
            return Err(Error::new(
                ErrorKind::InternalError,
                format!(
                    "Check failed: (std::string_view(existing.name.data, existing.name.size) != \
                     new_name) is false: Duplicate field name \"{}\" in type \"{}\"",
                    String::from_utf8_lossy(name),
                    // SAFETY: the key lives in the pool.
                    String::from_utf8_lossy(unsafe {
                        crate::runtime::model::bytes::byte_slice(entry.info.type_key)
                    })
                ),
            ));
        }
        let mut field = *info;
        let flags = info.flags as i32;
        if flags & kTVMFFIFieldFlagBitSetterIsFunctionObj != 0 && !info.setter.is_null() {
            let setter = TVMFFIAny {
                type_index: kTVMFFIFunction,
                small_str_len: 0,
                value: TVMFFIAnyValue {
                    v_obj: info.setter.cast(),
                },
            };
            // SAFETY: the flag says `setter` is a live Function handle.
            self.keep_value(unsafe { AnyView::from_raw(&setter) })?;
        }
        field.name = self.copy_text(&info.name);
        field.doc = self.copy_text(&info.doc);
        field.metadata = self.copy_text(&info.metadata);
        field.default_value_or_factory = if flags & kTVMFFIFieldFlagBitMaskHasDefault != 0 {
            // SAFETY: the flag says the default is a valid value.
            self.keep_value(unsafe { AnyView::from_raw(&info.default_value_or_factory) })?
        } else {
            TVMFFIAny::NONE
        };
        let entry = self.entry_mut(type_index)?;
        entry.fields.push(field);
        entry.info.fields = entry.fields.as_ptr();
        entry.info.num_fields = entry.fields.len() as i32;
        Ok(())
    }

    /// See the public function of the same name.
    ///
    /// # Safety
    /// As for the public function.
    pub unsafe fn register_method(
        &mut self,
        type_index: i32,
        info: &TVMFFIMethodInfo,
    ) -> Result<()> {
        self.entry_mut(type_index)?;
        let mut method = *info;
        method.name = self.copy_text(&info.name);
        method.doc = self.copy_text(&info.doc);
        method.metadata = self.copy_text(&info.metadata);
        // SAFETY: the caller passes a valid method value.
        method.method = self.keep_value(unsafe { AnyView::from_raw(&info.method) })?;
        let entry = self.entry_mut(type_index)?;
        entry.methods.push(method);
        entry.info.methods = entry.methods.as_ptr();
        entry.info.num_methods = entry.methods.len() as i32;
        Ok(())
    }

    /// See the public function of the same name.
    ///
    /// # Safety
    /// As for the public function.
    pub unsafe fn register_metadata(
        &mut self,
        type_index: i32,
        meta: &TVMFFITypeMetadata,
    ) -> Result<()> {
        changed();
        if self.entry_mut(type_index)?.metadata.is_some() {
            let entry = self.entry_mut(type_index)?;
            return Err(Error::runtime(format!(
                "Overriding {}, possible causes:\n- two ObjectDef<T>() calls for the same T \n- when \
                 we forget to assign _type_key to ObjectRef<Y> that inherits from T\n- another \
                 type with the same key is already registered\nCross check the reflection \
                 registration.",
                // SAFETY: the key lives in the pool.
                String::from_utf8_lossy(unsafe {
                    crate::runtime::model::bytes::byte_slice(entry.info.type_key)
                })
            )));
        }
        let mut copy = *meta;
        copy.doc = self.copy_text(&meta.doc);
        let entry = self.entry_mut(type_index)?;
        let boxed = entry.metadata.insert(Box::new(copy));
        entry.info.metadata = &**boxed;
        Ok(())
    }

    /// See the public function of the same name.
    pub fn register_attr(
        &mut self,
        type_index: i32,
        name: &[u8],
        value: AnyView<'_>,
    ) -> Result<()> {
        changed();
        let column_index = match self.column_by_name.get(name) {
            Some(&i) => i,
            None => {
                self.columns.push(Box::new(Column {
                    c: TVMFFITypeAttrColumn {
                        data: core::ptr::null(),
                        size: 0,
                        begin_index: 0,
                    },
                    data: Vec::new(),
                }));
                self.column_by_name
                    .insert(name.into(), self.columns.len() - 1);
                self.columns.len() - 1
            }
        };
        if type_index == kTVMFFINone {
            return Ok(());
        }
        // The reference accepts a type index the table does not know yet (a
        // column may be filled before its type registers).
        let slot_index = usize::try_from(type_index)
            .ok()
            .filter(|&i| i < MAX_COLUMN_SLOTS)
            .ok_or_else(|| Error::value(format!("TypeAttr: invalid type index {type_index}")))?;
        let value = value.to_owned_any()?;
        let column = &mut self.columns[column_index];
        if slot_index >= column.data.len() {
            column.data.resize_with(slot_index + 1, || Any::NONE);
        }
        if column.data[slot_index].type_index() != kTVMFFINone {
            return Err(Error::runtime(format!(
                "TypeAttr `{}` is already registered for type index {type_index}. To update the \
                 stored value, register a mutable container (e.g., Dict/List) once and mutate it \
                 in place on subsequent calls.",
                String::from_utf8_lossy(name)
            )));
        }
        column.data[slot_index] = value;
        // `Any` is a transparent `TVMFFIAny`, so the vector is the C array.
        column.c.data = column.data.as_ptr().cast();
        column.c.size = column.data.len() as i32;
        Ok(())
    }
}

/// `TVMFFITypeGetOrAllocIndex`.
pub fn get_or_alloc_index(
    key: &[u8],
    static_index: i32,
    depth: i32,
    num_child_slots: i32,
    can_overflow: bool,
    parent_index: i32,
) -> Result<i32> {
    table().get_or_alloc(
        key,
        static_index,
        depth,
        num_child_slots,
        can_overflow,
        parent_index,
    )
}

/// `TVMFFITypeKeyToIndex`.
pub fn key_to_index(key: &[u8]) -> Result<i32> {
    table().by_key.get(key).copied().ok_or_else(|| {
        let message = format!(
            "Check failed: (it != type_key2index_.end()) is false: Cannot find type `{}`",
            String::from_utf8_lossy(key)
        );
        Error::new(ErrorKind::InternalError, message)
    })
}

/// The keys of every registered type, in type index order
/// (`ffi.GetRegisteredTypeKeys`).
pub fn registered_keys() -> Vec<Vec<u8>> {
    let t = table();
    t.entries
        .iter()
        .flatten()
        // SAFETY: keys live in the pool.
        .map(|e| unsafe { crate::runtime::model::bytes::byte_slice(e.info.type_key) }.to_vec())
        .collect()
}

/// `TVMFFIGetTypeInfo`: a pointer valid for the life of the process.
pub fn type_info(type_index: i32) -> Result<*const TVMFFITypeInfo> {
    Ok(&table().entry_mut(type_index)?.info)
}

/// The fields of `type_index` and of its ancestors below `ffi.Object`,
/// parent first (the order C++'s `ForEachFieldInfo` visits them), copied.
pub fn fields_with_ancestors(type_index: i32) -> Result<Vec<TVMFFIFieldInfo>> {
    table().fields_with_ancestors(type_index)
}

/// The hash of the type key of `type_index` (`GetTypeKeyHash`), 0 if none.
pub fn type_key_hash(type_index: i32) -> u64 {
    table()
        .entry_mut(type_index)
        .map_or(0, |e| e.info.type_key_hash)
}

/// The value of attribute `name` for `type_index`, if set.
pub fn attr_value(name: &str, type_index: i32) -> Option<Any> {
    let t = table();
    let column = &t.columns[*t.column_by_name.get(name.as_bytes())?];
    let value = column.data.get(usize::try_from(type_index).ok()?)?;
    (value.type_index() != kTVMFFINone).then(|| value.clone())
}

/// The type key of `type_index`, for messages (`<unknown:N>` if none).
pub fn type_key_of(type_index: i32) -> String {
    let mut t = table();
    match t.entry_mut(type_index) {
        // SAFETY: keys live in the pool.
        Ok(e) => String::from_utf8_lossy(unsafe {
            crate::runtime::model::bytes::byte_slice(e.info.type_key)
        })
        .into_owned(),
        Err(_) => format!("<unknown:{type_index}>"),
    }
}

/// `TVMFFITypeRegisterField`.
///
/// # Safety
/// Every byte array in `info` describes readable bytes (or is (NULL, 0)),
/// and its values (getter, setter, default, method) are valid, as the C
/// API requires of the struct.
pub unsafe fn register_field(type_index: i32, info: &TVMFFIFieldInfo) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { table().register_field(type_index, info) }
}

/// `TVMFFITypeRegisterMethod`.
///
/// # Safety
/// Every byte array in `info` describes readable bytes (or is (NULL, 0)),
/// and its values (getter, setter, default, method) are valid, as the C
/// API requires of the struct.
pub unsafe fn register_method(type_index: i32, info: &TVMFFIMethodInfo) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { table().register_method(type_index, info) }
}

/// `TVMFFITypeRegisterMetadata`.
///
/// # Safety
/// Every byte array in `meta` describes readable bytes (or is (NULL, 0)),
/// and its values (getter, setter, default, method) are valid, as the C
/// API requires of the struct.
pub unsafe fn register_metadata(type_index: i32, meta: &TVMFFITypeMetadata) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { table().register_metadata(type_index, meta) }
}

/// `TVMFFITypeRegisterAttr`.
pub fn register_attr(type_index: i32, name: &[u8], value: AnyView<'_>) -> Result<()> {
    table().register_attr(type_index, name, value)
}

/// Whether a registered type would run code at an address `inside`
/// accepts: a field's getter or setter, or a kept value (a default, a
/// method, an attribute) for which `object_runs` says so (the function
/// layer's test, which this layer does not know).
pub fn runs_code_in(
    inside: &dyn Fn(usize) -> bool,
    object_runs: &dyn Fn(&ObjectRef) -> bool,
) -> bool {
    let t = table();
    let object_runs = |v: &Any| v.view().to_object().is_some_and(|o| object_runs(&o));
    let field_runs = |f: &TVMFFIFieldInfo| {
        f.getter.is_some_and(|g| inside(g as usize)) || inside(f.setter as usize)
    };
    t.entries
        .iter()
        .flatten()
        .any(|e| e.fields.iter().any(field_runs))
        || t.values.iter().any(object_runs)
        || t.columns.iter().any(|c| c.data.iter().any(object_runs))
}

/// `TVMFFIGetTypeAttrColumn`: NULL when no such column exists.
pub fn attr_column(name: &[u8]) -> *const TVMFFITypeAttrColumn {
    let t = table();
    match t.column_by_name.get(name) {
        Some(&i) => &t.columns[i].c,
        None => core::ptr::null(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_types_take_parent_slots_then_overflow() {
        let base = get_or_alloc_index(b"unit.Base", -1, 1, 2, true, kTVMFFIObject).unwrap();
        assert!(base >= kTVMFFIDynObjectBegin);
        assert_eq!(
            get_or_alloc_index(b"unit.Base", -1, 1, 0, false, -1).unwrap(),
            base
        );
        assert_eq!(
            get_or_alloc_index(b"unit.A", -1, 2, 0, true, base).unwrap(),
            base + 1
        );
        assert_eq!(
            get_or_alloc_index(b"unit.B", -1, 2, 0, true, base).unwrap(),
            base + 2
        );
        assert!(get_or_alloc_index(b"unit.C", -1, 2, 0, true, base).unwrap() > base + 2);
        assert_eq!(
            get_or_alloc_index(b"unit.Missing", -1, 1, 0, true, -2).unwrap(),
            -2
        );
        assert!(get_or_alloc_index(b"unit.BadDepth", -1, 3, 0, true, base).is_err());
    }
}
