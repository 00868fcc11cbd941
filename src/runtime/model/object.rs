//! Reference counted objects: the combined strong/weak counter, deleter
//! dispatch, and [`ObjectRef`], the owning handle Rust code holds.
//!
//! Objects made here follow the official protocol exactly, because C++ code
//! compiled with the official headers counts references itself and calls the
//! header's deleter: new objects start at strong 1 / weak 1; the deleter gets
//! `Strong` (destroy contents), `Weak` (free memory) or `Both`.

use crate::abi::*;
use crate::platform::panic::contain_panic;
use core::ffi::{c_int, c_void};
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::LazyLock;

const STRONG_ONE: u64 = 1;
const WEAK_ONE: u64 = 1 << 32;
const STRONG_MASK: u64 = 0xffff_ffff;
/// The counter value of a freshly made object: one strong reference.
pub const INITIAL_REF_COUNT: u64 = STRONG_ONE | WEAK_ONE;

/// Allocates `size` (nonzero) bytes, zeroed if asked, with the C allocator
/// itself (16-aligned, without the global allocator's layers): for objects
/// laid out in place (header, cell, then their data), freed by their own
/// deleter with [`free_in_place`], and for container storage released
/// through a `data_deleter` of `libc::free`. `None` sizes (an overflowed
/// computation) and exhausted memory abort, as the global allocator does.
#[inline]
pub fn alloc_in_place(size: Option<usize>, zeroed: bool) -> NonNull<u8> {
    try_alloc_in_place(size, zeroed).unwrap_or_else(|| out_of_memory())
}

/// [`alloc_in_place`] that answers None instead of aborting: for sizes a
/// caller chose (the C constructors of strings and bytes), where the
/// reference raises.
#[inline]
pub fn try_alloc_in_place(size: Option<usize>, zeroed: bool) -> Option<NonNull<u8>> {
    const _: () = assert!(align_of::<TVMFFIObject>() <= 16);
    // SAFETY: `malloc`/`calloc` accept any size and return 16-aligned memory
    // or NULL.
    let mem = size.map_or(core::ptr::null_mut(), |n| unsafe {
        if zeroed {
            libc::calloc(1, n)
        } else {
            libc::malloc(n)
        }
    });
    NonNull::new(mem.cast())
}

/// Aborts on a failed object allocation. The size is not reported: keeping
/// it for this path would cost every allocation a register.
#[cold]
#[inline(never)]
pub(crate) fn out_of_memory() -> ! {
    eprintln!("memory allocation of an object failed");
    std::process::abort()
}

/// Frees memory from [`alloc_in_place`].
///
/// # Safety
/// `mem` came from `alloc_in_place` and is freed once.
pub unsafe fn free_in_place(mem: *mut c_void) {
    // SAFETY: per the contract, a live `malloc` block.
    unsafe { libc::free(mem) }
}

/// The deleter of objects from [`alloc_in_place`] with nothing to destroy
/// (strings, bytes, shapes, BigInts): frees them on the weak release.
///
/// # Safety
/// `this` came from `alloc_in_place`; called by the deleter protocol.
pub unsafe extern "C" fn delete_plain_in_place(this: *mut c_void, flags: c_int) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: per the contract; the weak count reached zero.
        unsafe { free_in_place(this) }
    }
}

/// Adds one strong reference.
///
/// # Safety
/// `obj` points to a live object (the caller holds a strong reference).
#[inline]
pub unsafe fn inc_ref(obj: NonNull<TVMFFIObject>) {
    // SAFETY: the caller guarantees `obj` is live.
    unsafe { obj.as_ref() }
        .combined_ref_count
        .fetch_add(STRONG_ONE, Ordering::Relaxed);
}

/// Drops one strong reference, running the deleter as the official protocol
/// prescribes when counts reach zero.
///
/// # Safety
/// `obj` points to a live object and the caller gives up one strong reference.
#[inline]
pub unsafe fn dec_ref(obj: NonNull<TVMFFIObject>) {
    // SAFETY: the caller holds a strong reference, so the header is live.
    let header = unsafe { obj.as_ref() };
    let before = header
        .combined_ref_count
        .fetch_sub(STRONG_ONE, Ordering::Release);
    if before & STRONG_MASK == STRONG_ONE {
        // SAFETY: we just released the last strong reference.
        unsafe { release_last_strong(obj, before) }
    }
}

/// Runs the deleter after the last strong reference went away; `before` is
/// the counter value before that release. The common case (no weak
/// references) is a tail call of the deleter; the rest is out of line.
///
/// # Safety
/// The caller released the last strong reference of `obj`.
#[inline(never)]
unsafe fn release_last_strong(obj: NonNull<TVMFFIObject>, before: u64) {
    let raw = obj.as_ptr();
    fence(Ordering::Acquire);
    // SAFETY: weak holders keep the memory alive until the deleter frees it.
    let Some(deleter) = (unsafe { &*raw }).deleter else {
        return;
    };
    if before == INITIAL_REF_COUNT {
        // SAFETY: both counts reached zero; nobody else can see the object.
        unsafe { deleter(raw.cast(), kTVMFFIObjectDeleterFlagBitMaskBoth) };
    } else {
        // SAFETY: as for this function, and weak references remain.
        unsafe { release_with_weak(obj, deleter) }
    }
}

/// [`release_last_strong`] when weak references remain: destroy the
/// contents, then free the memory if the weak count reaches zero too.
///
/// # Safety
/// As for `release_last_strong`; `deleter` is the object's.
#[cold]
#[inline(never)]
unsafe fn release_with_weak(obj: NonNull<TVMFFIObject>, deleter: TVMFFIObjectDeleter) {
    let raw = obj.as_ptr();
    // SAFETY: only weak holders remain, and they never touch the contents.
    unsafe { deleter(raw.cast(), kTVMFFIObjectDeleterFlagBitMaskStrong) };
    // SAFETY: weak holders keep the header alive.
    let header = unsafe { &*raw };
    if header
        .combined_ref_count
        .fetch_sub(WEAK_ONE, Ordering::Release)
        == WEAK_ONE
    {
        fence(Ordering::Acquire);
        // SAFETY: the weak count reached zero as well: free the memory.
        unsafe { deleter(raw.cast(), kTVMFFIObjectDeleterFlagBitMaskWeak) };
    }
}

/// An owning (strong) reference to any object, ours or foreign.
#[repr(transparent)]
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ObjectRef(NonNull<TVMFFIObject>);

// SAFETY: objects are reference counted atomically and their contents are
// immutable or internally synchronised, as in the official runtime.
unsafe impl Send for ObjectRef {}
// SAFETY: see `Send`.
unsafe impl Sync for ObjectRef {}

impl ObjectRef {
    /// Takes over a strong reference.
    ///
    /// # Safety
    /// `ptr` is a live object and the caller transfers one strong reference.
    #[inline]
    pub unsafe fn from_raw(ptr: NonNull<TVMFFIObject>) -> Self {
        Self(ptr)
    }

    /// Makes a new strong reference to a borrowed object.
    ///
    /// # Safety
    /// `ptr` is a live object for the duration of the call.
    #[inline]
    pub unsafe fn from_borrowed(ptr: NonNull<TVMFFIObject>) -> Self {
        // SAFETY: the caller guarantees the object is live.
        unsafe { inc_ref(ptr) };
        Self(ptr)
    }

    /// Gives up the reference as a raw handle (see [`ObjectRef::into_raw`]).
    pub fn into_raw_ptr(self) -> *mut TVMFFIObject {
        self.into_raw().as_ptr()
    }

    /// Gives up ownership, returning the raw handle with its strong reference.
    #[inline]
    pub fn into_raw(self) -> NonNull<TVMFFIObject> {
        ManuallyDrop::new(self).0
    }

    /// The raw handle, still owned by `self`.
    #[inline]
    pub fn as_ptr(&self) -> *mut TVMFFIObject {
        self.0.as_ptr()
    }

    /// The raw handle as non-null, still owned by `self`.
    #[inline]
    pub fn as_non_null(&self) -> NonNull<TVMFFIObject> {
        self.0
    }

    /// The type index stored in the header.
    #[inline]
    pub fn type_index(&self) -> i32 {
        // SAFETY: `self` keeps the object alive.
        unsafe { self.0.as_ref() }.type_index
    }

    /// The current strong count (for tests and diagnostics).
    pub fn strong_count(&self) -> u32 {
        // SAFETY: `self` keeps the object alive.
        let count = unsafe { self.0.as_ref() }
            .combined_ref_count
            .load(Ordering::Relaxed);
        (count & STRONG_MASK) as u32
    }

    /// The cell `C` after the header, or None when this object's type index
    /// does not carry one. Shared: only for cells never mutated in place.
    #[inline]
    pub fn cell<C: FrozenCell>(&self) -> Option<&C> {
        // SAFETY: `self` keeps the object alive.
        let cell = unsafe { cell_at::<C>(self.0) }.ok()?;
        // SAFETY: the cell lives as long as `self`, and a frozen cell is not
        // mutated while the object is shared.
        Some(unsafe { cell.as_ref() })
    }

    /// A pointer to the cell `C` after the header, or None when this object's
    /// type index does not carry one. For cells mutated in place (List, Dict);
    /// the pointer is valid while `self` lives.
    #[inline]
    pub fn cell_ptr<C: Cell>(&self) -> Option<NonNull<C>> {
        // SAFETY: `self` keeps the object alive.
        unsafe { cell_at::<C>(self.0) }.ok()
    }

    /// Reinterprets the memory after the header as a `T`.
    ///
    /// # Safety
    /// The object was created by `new_object::<T>`, or is a foreign object
    /// whose layout after the header is `T`'s (a `#[repr(C)]` mirror of the
    /// reference's C++ class of the object's type index); the caller checks
    /// this, usually through the type index.
    #[inline]
    pub unsafe fn payload<T>(&self) -> &T {
        // SAFETY: per the contract the allocation is an `ObjBox<T>`, alive
        // while `self` holds a strong reference.
        unsafe { &(*self.0.as_ptr().cast::<ObjBox<T>>()).payload }
    }
}

impl Clone for ObjectRef {
    #[inline]
    fn clone(&self) -> Self {
        // SAFETY: `self` keeps the object alive.
        unsafe { inc_ref(self.0) };
        Self(self.0)
    }
}

impl Drop for ObjectRef {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `self` owns one strong reference.
        unsafe { dec_ref(self.0) }
    }
}

/// A cell type: what objects of some type indices store right after their
/// header (in the spirit of rustls-ffi's `Castable`). [`ObjectRef::cell`] and
/// [`cell_at`] check the type index before they hand one out.
///
/// Where a type can have subclasses, `holds` accepts them
/// ([`crate::runtime::model::lineage::is_instance`], the reference's `IsObjectInstance`):
/// the ABI's subclass objects begin with their parent's layout (C++
/// inheritance, and the rule for C types registered with a parent). The
/// built-in depth-1 types (String, Bytes, Function, Error, Shape, Tensor,
/// the containers, Module, BigInt) have none: the reference, and this
/// library, register them with no child slots and no overflow, so a
/// subclass registration fails and their check is the exact index.
///
/// # Safety
/// Every live object, ours or foreign, whose type index satisfies
/// [`Cell::holds`] has a valid `Self` at `size_of::<TVMFFIObject>()` bytes
/// from its start, alive as long as the object.
pub unsafe trait Cell: Sized {
    /// Whether objects of `type_index` carry this cell.
    fn holds(type_index: i32) -> bool;
}

/// A [`Cell`] that is never mutated while its object is shared, so it can be
/// borrowed through a shared reference to the object.
///
/// # Safety
/// No code writes the cell of an object another reference can see.
pub unsafe trait FrozenCell: Cell {}

/// The cell `C` of the object at `obj`, or the object's type index when it
/// carries no such cell.
///
/// # Safety
/// `obj` is a live object (its header is readable).
#[inline]
pub unsafe fn cell_at<C: Cell>(obj: NonNull<TVMFFIObject>) -> Result<NonNull<C>, i32> {
    // SAFETY: the caller guarantees the header is readable.
    let type_index = unsafe { obj.as_ref() }.type_index;
    if C::holds(type_index) {
        // SAFETY: per `Cell`'s contract the cell lies inside the object, so
        // the offset stays in bounds.
        Ok(unsafe { obj.byte_add(size_of::<TVMFFIObject>()) }.cast())
    } else {
        Err(type_index)
    }
}

// SAFETY: Functions, ours (`function.rs`) and the reference's `FunctionObj`,
// keep the function cell after the header; it is set once at creation.
unsafe impl Cell for TVMFFIFunctionCell {
    #[inline]
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIFunction
    }
}
// SAFETY: see `Cell`: written only at creation.
unsafe impl FrozenCell for TVMFFIFunctionCell {}

// SAFETY: Shapes keep `{data, size}` after the header (`scalar.rs`, and the
// reference's `ShapeObj`); immutable.
unsafe impl Cell for TVMFFIShapeCell {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIShape
    }
}
// SAFETY: see `Cell`: immutable.
unsafe impl FrozenCell for TVMFFIShapeCell {}

// SAFETY: Strings and Bytes keep their byte array after the header
// (`string.rs`, the reference's `BytesObjBase`); immutable.
unsafe impl Cell for TVMFFIByteArray {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIStr || type_index == kTVMFFIBytes
    }
}
// SAFETY: see `Cell`: immutable.
unsafe impl FrozenCell for TVMFFIByteArray {}

// SAFETY: Tensors keep their DLTensor after the header (`tensor.rs`, the
// reference's `TensorObj`); the struct (not the data it points to) is
// immutable.
unsafe impl Cell for DLTensor {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFITensor
    }
}
// SAFETY: see `Cell`: the struct is immutable.
unsafe impl FrozenCell for DLTensor {}

// SAFETY: Errors keep the error cell after the header (`error.rs`, the
// reference's `ErrorObj`).
unsafe impl Cell for TVMFFIErrorCell {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIError
    }
}
// SAFETY: only `update_backtrace` and the structural traversals' visit
// context (`visit_error_context::attach`, its `extra_context` slot) write the
// cell, and their contract (ours and the reference's) is that the error is
// still in flight, held by the failing call alone.
unsafe impl FrozenCell for TVMFFIErrorCell {}

// SAFETY: Arrays and Lists keep the sequence cell after the header
// (`seq.rs`, the reference's `SeqBaseObj`). Lists grow in place, so it is
// not frozen.
unsafe impl Cell for TVMFFISeqCell {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIArray || type_index == kTVMFFIList
    }
}

/// A Rust-allocated object: the C header followed by a payload laid out as
/// the C cell of its type (the payload's first field is the cell).
#[repr(C)]
pub struct ObjBox<T> {
    header: TVMFFIObject,
    payload: ManuallyDrop<T>,
}

impl<T> ObjBox<T> {
    /// Where the payload starts, in bytes from the header (for the x86-64
    /// Linux call path of extern-C functions, written in assembly).
    #[cfg(tvm_ffi_fast_call)]
    pub const PAYLOAD_OFFSET: usize = core::mem::offset_of!(ObjBox<T>, payload);

    /// The payload after the header.
    #[inline]
    pub fn payload(&self) -> &T {
        &self.payload
    }
}

/// Allocates an object of `type_index` holding `payload`, with one strong
/// reference. Its deleter drops the payload on `Strong` and frees the box on
/// `Weak`, so it tolerates being released from foreign code.
pub fn new_object<T: Send + Sync + 'static>(type_index: i32, payload: T) -> ObjectRef {
    let boxed = Box::new(ObjBox {
        header: TVMFFIObject {
            combined_ref_count: AtomicU64::new(INITIAL_REF_COUNT),
            type_index,
            __padding: 0,
            deleter: Some(delete_boxed::<T>),
        },
        payload: ManuallyDrop::new(payload),
    });
    // SAFETY: a fresh Box is non-null; we hand its single strong reference over.
    unsafe { ObjectRef::from_raw(NonNull::from(Box::leak(boxed)).cast()) }
}

/// The deleter of [`new_object`] allocations.
unsafe extern "C" fn delete_boxed<T>(this: *mut c_void, flags: c_int) {
    let obj = this.cast::<ObjBox<T>>();
    // A panic in a payload's Drop must not unwind into C: contain it and leak.
    contain_panic(|| {
        if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
            // SAFETY: called once when the strong count reaches zero; the
            // payload is not used afterwards.
            unsafe { ManuallyDrop::drop(&mut (*obj).payload) };
        }
        if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
            // SAFETY: called once when the weak count reaches zero; the box
            // came from `Box::leak` in `new_object`; `ManuallyDrop` keeps the
            // payload from being dropped twice.
            drop(unsafe { Box::from_raw(obj) });
        }
    });
}

/// Process-wide plain `ffi.Object` markers handed to frontends.
static INVALID: LazyLock<ObjectRef> = LazyLock::new(|| new_object(kTVMFFIObject, ()));
static KWARGS: LazyLock<ObjectRef> = LazyLock::new(|| new_object(kTVMFFIObject, ()));

/// The process-wide KWARGS marker (`ffi.GetKwargsObject`).
pub fn kwargs_object() -> ObjectRef {
    ObjectRef::clone(&KWARGS)
}

/// The process-wide "missing" marker (`ffi.GetInvalidObject`).
pub fn invalid_object() -> ObjectRef {
    ObjectRef::clone(&INVALID)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::any::Any;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    struct DropCounter(Arc<AtomicUsize>);
    impl Drop for DropCounter {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn cells_are_handed_out_only_for_their_type_indices() {
        let shape = crate::runtime::value::scalar::new_shape(&[2, 3]);
        let cell = shape.cell::<TVMFFIShapeCell>().expect("a Shape cell");
        assert_eq!(cell.size, 2);
        assert!(shape.cell::<TVMFFIByteArray>().is_none());
        assert!(shape.cell_ptr::<TVMFFISeqCell>().is_none());
        let text = crate::runtime::model::string::make_text(
            b"a heap string, not small",
            crate::runtime::model::string::TextKind::Str,
        );
        let text = text.view().to_object().expect("a String object");
        assert_eq!(
            text.cell::<TVMFFIByteArray>().expect("a String cell").size,
            24
        );
        assert!(text.cell::<TVMFFIFunctionCell>().is_none());
        let list = crate::runtime::value::seq::new_list(vec![Any::from(1i64)]);
        // SAFETY: `list` is alive and nobody else mutates it.
        let size = unsafe {
            list.cell_ptr::<TVMFFISeqCell>()
                .expect("a List cell")
                .as_ref()
                .size
        };
        assert_eq!(size, 1);
        // SAFETY: `shape` is alive.
        let tensor = unsafe { cell_at::<DLTensor>(shape.as_non_null()) };
        assert_eq!(tensor.err(), Some(kTVMFFIShape));
    }

    #[test]
    fn payload_dropped_once_and_weak_keeps_memory() {
        let drops = Arc::new(AtomicUsize::new(0));
        let obj = new_object(kTVMFFIObject, DropCounter(drops.clone()));
        let raw = obj.as_ptr();
        // SAFETY: `obj` keeps the header alive; we add a weak reference the
        // way C++ WeakObjectPtr does.
        unsafe {
            (*raw)
                .combined_ref_count
                .fetch_add(WEAK_ONE, Ordering::Relaxed)
        };
        let second = obj.clone();
        drop(obj);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(second);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // SAFETY: the weak reference keeps the memory; releasing it frees.
        unsafe {
            assert_eq!(
                (*raw)
                    .combined_ref_count
                    .fetch_sub(WEAK_ONE, Ordering::Relaxed),
                WEAK_ONE
            );
            ((*raw).deleter.unwrap())(raw.cast(), kTVMFFIObjectDeleterFlagBitMaskWeak);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}
