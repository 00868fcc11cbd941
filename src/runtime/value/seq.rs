//! Array and List objects: `{TVMFFIObject, TVMFFISeqCell}` with owning
//! 16-byte `TVMFFIAny` elements. Arrays keep their elements in place after
//! the cell (`data_deleter` NULL), Lists in a separate buffer released
//! through `data_deleter`, as in the reference; both objects come from
//! `malloc`, so C++ code that swaps a List's buffer (and deleter) for its own
//! stays compatible.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::object::{INITIAL_REF_COUNT, ObjectRef};
use crate::runtime::value::hash::any_equal;
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use core::sync::atomic::AtomicU64;

#[repr(C)]
struct SeqObj {
    header: TVMFFIObject,
    cell: TVMFFISeqCell,
}
const ELEM: usize = size_of::<TVMFFIAny>();

/// `size` bytes (at least one) from the C allocator, released by `free`.
fn c_alloc(size: usize) -> *mut u8 {
    crate::runtime::model::object::alloc_in_place(Some(size.max(1)), false).as_ptr()
}

/// Deleter of our sequence objects.
unsafe extern "C" fn delete_seq(this: *mut c_void, flags: c_int) {
    let obj = this.cast::<SeqObj>();
    if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // Releasing elements may release nested containers in turn: on a
        // fresh stack segment when needed, so deep nesting cannot overflow.
        // A panic while releasing (a Rust deleter of an element) is
        // contained: the remaining elements leak, nothing unwinds into C.
        crate::platform::panic::contain_panic(|| {
            // SAFETY: the first `size` elements are owned; the buffer goes
            // back through whichever deleter owns it (NULL: in place).
            crate::runtime::model::depth::deep(|| unsafe {
                let cell = &mut (*obj).cell;
                for i in 0..cell.size.max(0) as usize {
                    drop(Any::from_raw(*cell.data.cast::<TVMFFIAny>().add(i)));
                }
                cell.size = 0;
                if let Some(d) = cell.data_deleter.take() {
                    d(cell.data);
                }
            })
        });
    }
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: the object came from `c_alloc` in `new_seq`.
        unsafe { crate::runtime::model::object::free_in_place(this) };
    }
}

/// Makes an Array (elements in place) or a List (separate buffer).
fn new_seq(type_index: i32, items: Vec<Any>) -> ObjectRef {
    let n = items.len();
    let in_place = type_index == kTVMFFIArray;
    let extra = if in_place { n * ELEM } else { 0 };
    let mem = c_alloc(size_of::<SeqObj>() + extra);
    let (data, data_deleter): (*mut c_void, Option<unsafe extern "C" fn(*mut c_void)>) = if in_place
    {
        // SAFETY: the elements follow the 56-byte object.
        (unsafe { mem.add(size_of::<SeqObj>()) }.cast(), None)
    } else {
        (c_alloc(n * ELEM).cast(), Some(libc::free))
    };
    // SAFETY: `mem` holds the object; `data` holds `n` elements.
    unsafe {
        for (i, item) in items.into_iter().enumerate() {
            data.cast::<TVMFFIAny>().add(i).write(item.into_raw());
        }
        mem.cast::<SeqObj>().write(SeqObj {
            header: TVMFFIObject {
                combined_ref_count: AtomicU64::new(INITIAL_REF_COUNT),
                type_index,
                __padding: 0,
                deleter: Some(delete_seq),
            },
            cell: TVMFFISeqCell {
                data,
                size: n as i64,
                capacity: n as i64,
                data_deleter,
            },
        });
        ObjectRef::from_raw(NonNull::new_unchecked(mem).cast())
    }
}

/// Makes an Array of `items`.
pub fn new_array(items: Vec<Any>) -> ObjectRef {
    new_seq(kTVMFFIArray, items)
}

/// Makes a List of `items`.
pub fn new_list(items: Vec<Any>) -> ObjectRef {
    new_seq(kTVMFFIList, items)
}

/// The cell of an Array (`want` = kTVMFFIArray) or List, ours or foreign.
fn cell_of(obj: &ObjectRef, want: i32) -> Result<*mut TVMFFISeqCell> {
    match obj.cell_ptr::<TVMFFISeqCell>() {
        Some(cell) if obj.type_index() == want => Ok(cell.as_ptr()),
        _ => Err(Error::type_error(format!(
            "expected {}, got {}",
            crate::runtime::model::type_table::type_key_of(want),
            crate::runtime::model::type_table::type_key_of(obj.type_index())
        ))),
    }
}

/// A view of a sequence's elements.
pub fn elements(obj: &ObjectRef, want: i32) -> Result<&[TVMFFIAny]> {
    // SAFETY: the cell describes `size` live elements kept alive by `obj`.
    unsafe {
        let cell = &*cell_of(obj, want)?;
        Ok(if cell.size <= 0 {
            &[]
        } else {
            core::slice::from_raw_parts(cell.data.cast(), cell.size as usize)
        })
    }
}

fn index_error(i: i64, n: usize) -> Error {
    Error::new(
        ErrorKind::IndexError,
        format!("Index {i} out of bounds {n}"),
    )
}

/// Views of a sequence's elements, borrowed from it.
pub fn views(obj: &ObjectRef, want: i32) -> Result<impl Iterator<Item = AnyView<'_>>> {
    // SAFETY: stored elements are valid values, kept alive by `obj`.
    Ok(elements(obj, want)?
        .iter()
        .map(|v| unsafe { AnyView::from_raw(v) }))
}

/// A sequence's elements, stable while callbacks run over them: an Array's
/// borrowed (an Array does not change while another reference holds it),
/// a List's copied (a callback may clear or refill it, freeing its storage
/// and the elements themselves).
pub enum Stable<'a> {
    /// An Array's own storage.
    Borrowed(&'a [TVMFFIAny]),
    /// New references to a List's elements.
    Owned(Vec<Any>),
}

impl Stable<'_> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Stable::Borrowed(items) => items.len(),
            Stable::Owned(items) => items.len(),
        }
    }

    /// Element `i` (`i < len`).
    pub fn view(&self, i: usize) -> AnyView<'_> {
        match self {
            // SAFETY: stored elements are valid values, kept alive by the
            // Array, which the caller holds.
            Stable::Borrowed(items) => unsafe { AnyView::from_raw(&items[i]) },
            Stable::Owned(items) => items[i].view(),
        }
    }

    /// The elements in order.
    pub fn views(&self) -> impl Iterator<Item = AnyView<'_>> {
        (0..self.len()).map(|i| self.view(i))
    }
}

/// The elements of the Array or List `obj`, stable while callbacks run
/// (see [`Stable`]). `obj` must be held by the caller beyond whatever
/// reference the traversal started from, as `AnyView::to_object` gives.
pub fn stable_elements(obj: &ObjectRef) -> Result<Stable<'_>> {
    let t = obj.type_index();
    let items = elements(obj, t)?;
    if t == kTVMFFIArray {
        return Ok(Stable::Borrowed(items));
    }
    items
        .iter()
        // SAFETY: stored elements are valid values, kept alive by `obj`.
        .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
        .collect::<Result<_>>()
        .map(Stable::Owned)
}

/// A new reference to element `i`; IndexError when out of range.
pub fn get(obj: &ObjectRef, want: i32, i: i64) -> Result<Any> {
    let items = elements(obj, want)?;
    let item = usize::try_from(i)
        .ok()
        .and_then(|u| items.get(u))
        .ok_or_else(|| index_error(i, items.len()))?;
    // SAFETY: stored elements are valid.
    unsafe { AnyView::from_raw(item) }.to_owned_any()
}

/// Whether any element equals `value` (`AnyEqual`).
pub fn contains(obj: &ObjectRef, want: i32, value: AnyView<'_>) -> Result<bool> {
    for item in elements(obj, want)? {
        // SAFETY: stored elements are valid.
        if any_equal(unsafe { AnyView::from_raw(item) }, value)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Replaces element `i` of an Array or a List in place (unsynchronised, as
/// [`ListMut`]). The structural mutators change an Array so only when it is
/// uniquely owned, as the reference does.
pub fn set_in_place(obj: &ObjectRef, i: i64, value: Any) -> Result<()> {
    let t = obj.type_index();
    let want = if t == kTVMFFIArray { t } else { kTVMFFIList };
    ListMut(cell_of(obj, want)?).set(i, value)
}

/// Appends `values` to the Array `obj` in place, growing its buffer
/// geometrically, when the caller's reference is its only one (nobody else
/// can see it change); when it is shared, changes nothing and hands the
/// values back.
pub fn append_to_unshared_array(obj: &ObjectRef, values: Vec<Any>) -> Result<Option<Vec<Any>>> {
    if obj.strong_count() != 1 {
        return Ok(Some(values));
    }
    let mut array = ListMut(cell_of(obj, kTVMFFIArray)?);
    let (len, cap) = (array.len(), array.cell_ref().capacity.max(0) as usize);
    let needed = len + values.len();
    if needed > cap {
        array.reserve(needed.max(cap.saturating_mul(2)))?;
    }
    array.insert(len as i64, values)?;
    Ok(None)
}

/// Mutations of a List in place (unsynchronised, as in the reference).
pub struct ListMut(*mut TVMFFISeqCell);

impl ListMut {
    /// The List behind `obj`.
    pub fn new(obj: &ObjectRef) -> Result<ListMut> {
        Ok(ListMut(cell_of(obj, kTVMFFIList)?))
    }

    fn cell(&mut self) -> &mut TVMFFISeqCell {
        // SAFETY: the caller keeps the List alive while mutating it.
        unsafe { &mut *self.0 }
    }

    fn cell_ref(&self) -> &TVMFFISeqCell {
        // SAFETY: as in `cell`.
        unsafe { &*self.0 }
    }

    fn len(&self) -> usize {
        self.cell_ref().size.max(0) as usize
    }

    fn slot(&self, i: usize) -> *mut TVMFFIAny {
        // SAFETY: callers pass `i` below the capacity.
        unsafe { self.cell_ref().data.cast::<TVMFFIAny>().add(i) }
    }

    /// Ensures room for `cap` elements, moving to a fresh `malloc` buffer.
    /// A capacity that cannot be allocated is a `MemoryError`, not an abort
    /// (and never a short buffer: the byte size is overflow-checked).
    pub fn reserve(&mut self, cap: usize) -> Result<()> {
        let cell = self.cell();
        if cap <= cell.capacity.max(0) as usize {
            return Ok(());
        }
        let too_big = || {
            Error::new(
                ErrorKind::MemoryError,
                format!("cannot reserve room for {cap} elements"),
            )
        };
        let bytes = cap
            .checked_mul(ELEM)
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(too_big)?;
        // SAFETY: plain C allocation, checked for NULL.
        let data = unsafe { libc::malloc(bytes) };
        if data.is_null() {
            return Err(too_big());
        }
        // SAFETY: move the live elements, then release the old buffer
        // through its own deleter (NULL: in place, nothing to free).
        unsafe {
            core::ptr::copy_nonoverlapping(
                cell.data.cast::<TVMFFIAny>(),
                data.cast(),
                cell.size.max(0) as usize,
            );
            if let Some(d) = cell.data_deleter {
                d(cell.data);
            }
        }
        cell.data = data;
        cell.capacity = cap as i64;
        cell.data_deleter = Some(libc::free);
        Ok(())
    }

    fn check(&self, i: i64, inclusive: bool) -> Result<usize> {
        let n = self.len();
        match usize::try_from(i) {
            Ok(u) if u < n || (inclusive && u == n) => Ok(u),
            // An insert position may be the end: the reference names the
            // closed range.
            _ if inclusive => Err(Error::new(
                ErrorKind::IndexError,
                format!("Index {i} out of bounds [0, {n}]"),
            )),
            _ => Err(index_error(i, n)),
        }
    }

    /// Replaces element `i`.
    pub fn set(&mut self, i: i64, value: Any) -> Result<()> {
        let i = self.check(i, false)?;
        // SAFETY: `i < size`; the old element is released.
        unsafe {
            drop(Any::from_raw(core::ptr::replace(
                self.slot(i),
                value.into_raw(),
            )))
        };
        Ok(())
    }

    /// Inserts `values` before position `i` (`i == len` appends).
    pub fn insert(&mut self, i: i64, values: Vec<Any>) -> Result<()> {
        if values.is_empty() {
            // As the reference: nothing to insert is no error, wherever.
            return Ok(());
        }
        let i = self.check(i, true)?;
        let (n, k) = (self.len(), values.len());
        if n + k > self.cell_ref().capacity.max(0) as usize {
            self.reserve((n + k).max(n * 2).max(4))?;
        }
        // SAFETY: capacity holds `n + k`; shift the tail and write `values`.
        unsafe {
            core::ptr::copy(self.slot(i), self.slot(i + k), n - i);
            for (j, v) in values.into_iter().enumerate() {
                self.slot(i + j).write(v.into_raw());
            }
        }
        self.cell().size = (n + k) as i64;
        Ok(())
    }

    /// Removes elements `[first, last)`; IndexError when out of range.
    pub fn erase(&mut self, first: i64, last: i64) -> Result<()> {
        if first == last {
            return Ok(());
        }
        let n = self.len();
        if first < 0 || last > n as i64 || first >= last {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!("Erase range [{first}, {last}) out of bounds {n}"),
            ));
        }
        let (first, last) = (first as usize, last as usize);
        // SAFETY: release the erased elements, shift the tail down.
        unsafe {
            for j in first..last {
                drop(Any::from_raw(*self.slot(j)));
            }
            core::ptr::copy(self.slot(last), self.slot(first), n - last);
        }
        self.cell().size = (n - (last - first)) as i64;
        Ok(())
    }

    /// Removes element `i` and returns it.
    pub fn pop(&mut self, i: i64) -> Result<Any> {
        let u = self.check(i, false)?;
        // SAFETY: `u < size`; we take a new reference before erasing.
        let value = unsafe { AnyView::from_raw(&*self.slot(u)) }.to_owned_any()?;
        self.erase(i, i + 1)?;
        Ok(value)
    }

    /// Reverses the elements.
    pub fn reverse(&mut self) {
        let n = self.len();
        // SAFETY: the first `n` elements are live.
        unsafe { core::slice::from_raw_parts_mut(self.cell().data.cast::<TVMFFIAny>(), n) }
            .reverse();
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        let n = self.len() as i64;
        let _ = self.erase(0, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::string::{TextKind, make_text};

    #[test]
    fn get_and_contains_check_bounds_and_compare_by_value() {
        let a = new_array(vec![
            Any::from(1i64),
            make_text(b"a heap string of some length", TextKind::Str),
        ]);
        assert_eq!(get(&a, kTVMFFIArray, 0).unwrap().view().as_i64(), Some(1));
        assert_eq!(
            get(&a, kTVMFFIArray, 2).unwrap_err().to_string(),
            "IndexError: Index 2 out of bounds 2"
        );
        assert_eq!(
            get(&a, kTVMFFIArray, -1).unwrap_err().to_string(),
            "IndexError: Index -1 out of bounds 2"
        );
        let same = make_text(b"a heap string of some length", TextKind::Str);
        assert!(contains(&a, kTVMFFIArray, same.view()).unwrap());
        assert!(!contains(&a, kTVMFFIArray, Any::from(2i64).view()).unwrap());
        // The wrong sequence kind is an error, not a misread.
        assert!(get(&a, kTVMFFIList, 0).is_err());
    }

    #[test]
    fn elements_hold_references_and_check_the_sequence_kind() {
        let item = make_text(b"an element that lives on the heap", TextKind::Str)
            .view()
            .to_object()
            .unwrap();
        let list = new_list(vec![Any::from(item.clone()), Any::from(item.clone())]);
        assert_eq!(item.strong_count(), 3);
        assert_eq!(elements(&list, kTVMFFIList).unwrap().len(), 2);
        assert_eq!(
            elements(&list, kTVMFFIArray).unwrap_err().to_string(),
            "TypeError: expected ffi.Array, got ffi.List"
        );
        drop(list);
        assert_eq!(item.strong_count(), 1);
        assert!(
            elements(&new_array(Vec::new()), kTVMFFIArray)
                .unwrap()
                .is_empty()
        );
    }
}
