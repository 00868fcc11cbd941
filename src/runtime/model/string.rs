//! String and Bytes values and the small-string rule.
//!
//! Payloads of at most [`SMALL_MAX`] bytes stay in the `TVMFFIAny` itself
//! (`kTVMFFISmallStr` / `kTVMFFISmallBytes`, unused bytes zero, so hashing and
//! equality of inline C++ agree); longer ones become objects laid out as
//! `{TVMFFIObject, TVMFFIByteArray, data[len], NUL}` in one allocation.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView, is_object_index, take_rvalue_ref};
use crate::runtime::model::bytes::byte_slice;
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{INITIAL_REF_COUNT, ObjectRef, cell_at};
use core::ffi::CStr;
use core::ptr::NonNull;
use core::sync::atomic::AtomicU64;

/// The longest payload stored inline in a `TVMFFIAny`.
pub const SMALL_MAX: usize = 7;

/// Which of the two text kinds a value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    /// `ffi.String` / `kTVMFFISmallStr`.
    Str,
    /// `ffi.Bytes` / `kTVMFFISmallBytes`.
    Bytes,
}

impl TextKind {
    fn small_index(self) -> i32 {
        match self {
            TextKind::Str => kTVMFFISmallStr,
            TextKind::Bytes => kTVMFFISmallBytes,
        }
    }
    /// The type index of heap objects of this kind.
    pub fn object_index(self) -> i32 {
        match self {
            TextKind::Str => kTVMFFIStr,
            TextKind::Bytes => kTVMFFIBytes,
        }
    }
}

/// The heap layout of a String/Bytes object, up to its inline data.
#[repr(C)]
struct TextObj {
    header: TVMFFIObject,
    bytes: TVMFFIByteArray,
}

const _: () = assert!(core::mem::size_of::<TextObj>() == 40);

fn text_size(len: usize) -> Option<usize> {
    len.checked_add(size_of::<TextObj>() + 1)
}

/// Formats a double with a C `printf` conversion (`%g`, `%.17g`): the exact
/// text C++ code prints, which frontends compare against.
pub fn format_f64(format: &core::ffi::CStr, x: f64) -> String {
    unsafe extern "C" {
        // Windows' msvcrt.dll writes three exponent digits (1e+020); the
        // reference, built against the UCRT, writes two, as mingw's own
        // C99 printf does.
        #[cfg_attr(all(windows, target_env = "gnu"), link_name = "__mingw_snprintf")]
        fn snprintf(
            buf: *mut core::ffi::c_char,
            n: usize,
            fmt: *const core::ffi::c_char,
            ...
        ) -> i32;
    }
    let mut buf = [0u8; 64];
    // SAFETY: a NUL-terminated format with one double conversion; the
    // buffer holds any such output (at most 24 characters) and its NUL.
    let n = unsafe { snprintf(buf.as_mut_ptr().cast(), buf.len(), format.as_ptr(), x) };
    String::from_utf8_lossy(&buf[..n.clamp(0, 63) as usize]).into_owned()
}

/// Makes a canonical String or Bytes value: small when it fits, else a heap
/// object. Embedded NULs and non-UTF-8 bytes are kept as they are.
#[inline]
pub fn make_text(bytes: &[u8], kind: TextKind) -> Any {
    let mut raw = TVMFFIAny::NONE;
    // SAFETY: `bytes` is readable and `raw` writable. Text of bytes that
    // exist in this process fits, or memory is exhausted (abort, as any
    // allocation).
    if unsafe { write_text(bytes.as_ptr(), bytes.len(), kind, &mut raw) }.is_err() {
        crate::runtime::model::object::out_of_memory();
    }
    // SAFETY: `write_text` leaves an owned value.
    unsafe { Any::from_raw(raw) }
}

/// The heap text object could not be allocated (`len` bytes, too many for
/// the address space or the memory left); `out` was not written.
#[derive(Debug)]
pub struct TextTooLarge;

/// [`make_text`] of `len` bytes at `data`, written straight into `out`
/// (whose old value is overwritten, not released): what the C constructors
/// return.
///
/// # Safety
/// `data` points to `len` readable bytes; `out` is writable. They may
/// overlap: the bytes are read before `out` is written (the reference
/// clears `out` first and copies the cleared bytes).
#[inline]
pub unsafe fn write_text(
    data: *const u8,
    len: usize,
    kind: TextKind,
    out: *mut TVMFFIAny,
) -> core::result::Result<(), TextTooLarge> {
    if len <= SMALL_MAX {
        // SAFETY: per the contract.
        unsafe { write_small_text(data, len, kind, out) };
        Ok(())
    } else {
        // SAFETY: per the contract.
        unsafe { write_heap_text_out_of_line(data, len, kind.object_index(), out) }
    }
}

/// The small case of [`write_text`] (`len` at most [`SMALL_MAX`]): the
/// bytes in the value itself.
///
/// # Safety
/// As for `write_text`, and `len <= SMALL_MAX`.
#[inline(always)]
pub unsafe fn write_small_text(data: *const u8, len: usize, kind: TextKind, out: *mut TVMFFIAny) {
    // SAFETY: per the contract; this borrow ends before `out` is written.
    let word = small_word(unsafe { core::slice::from_raw_parts(data, len) });
    let raw = TVMFFIAny {
        type_index: kind.small_index(),
        small_str_len: len as u32,
        value: TVMFFIAnyValue { v_uint64: word },
    };
    // SAFETY: per the contract.
    unsafe { out.write(raw) };
}

/// [`write_heap_text`] out of the inlined small path of [`write_text`].
///
/// # Safety
/// As for `write_text`.
#[inline(never)]
unsafe fn write_heap_text_out_of_line(
    data: *const u8,
    len: usize,
    type_index: i32,
    out: *mut TVMFFIAny,
) -> core::result::Result<(), TextTooLarge> {
    // SAFETY: per the contract.
    unsafe { write_heap_text(data, len, type_index, out) }
}

/// The heap case of [`write_text`]: a String/Bytes object (`type_index`)
/// holding a copy of the bytes. Inlined into its callers, which keep it out
/// of their small path (the C constructors check its answer where the
/// allocation is checked).
///
/// # Safety
/// As for `write_text`.
#[inline(always)]
pub unsafe fn write_heap_text(
    data: *const u8,
    len: usize,
    type_index: i32,
    out: *mut TVMFFIAny,
) -> core::result::Result<(), TextTooLarge> {
    let (obj, dst) = try_alloc_text(len, type_index).ok_or(TextTooLarge)?;
    // SAFETY: `dst` holds `len` bytes (see `alloc_text`), fresh memory apart
    // from `data`, which holds `len` readable bytes per the contract.
    unsafe { core::ptr::copy_nonoverlapping(data, dst, len) };
    let raw = TVMFFIAny {
        type_index,
        small_str_len: 0,
        value: TVMFFIAnyValue {
            v_obj: obj.as_ptr().cast(),
        },
    };
    // SAFETY: `out` is writable per the contract; the bytes are copied.
    unsafe { out.write(raw) };
    Ok(())
}

/// Up to 7 bytes as the little-endian word of a small string (zero
/// padded), read in at most two overlapping loads instead of a `memcpy`.
#[inline]
fn small_word(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= SMALL_MAX);
    if n >= 4 {
        let lo = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let hi = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        lo | hi << (8 * (n - 4))
    } else if n > 0 {
        u64::from(b[0])
            | u64::from(b[n / 2]) << (8 * (n / 2))
            | u64::from(b[n - 1]) << (8 * (n - 1))
    } else {
        0
    }
}

/// A text value `v` (of `kind`, or a raw string / byte-array pointer
/// whose content `bytes` was read from it) as an owned value of `kind`:
/// `v` itself when it is one already, else a new one from `bytes`, so a
/// raw C string is measured once.
#[inline(always)]
pub fn owned_text(bytes: &[u8], v: AnyView<'_>, kind: TextKind) -> Result<Any> {
    let t = v.type_index();
    if t == kind.small_index() || t == kind.object_index() {
        v.to_owned_any()
    } else {
        Ok(make_text(bytes, kind))
    }
}

/// Makes a heap String/Bytes object whatever the length.
pub fn new_text_object(bytes: &[u8], kind: TextKind) -> ObjectRef {
    let (obj, data) = alloc_text(bytes.len(), kind.object_index());
    // SAFETY: `data` holds `len` bytes (see `alloc_text`), apart from `bytes`;
    // once they are written the object is complete, with one reference.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
        ObjectRef::from_raw(obj.cast())
    }
}

/// A new text object (of `type_index`) of `len` bytes with its header and
/// terminating NUL written, and where its `len` bytes go: the caller writes
/// them.
#[inline(always)]
fn alloc_text(len: usize, type_index: i32) -> (NonNull<TextObj>, *mut u8) {
    try_alloc_text(len, type_index)
        .unwrap_or_else(|| crate::runtime::model::object::out_of_memory())
}

/// [`alloc_text`], None when the memory cannot be had.
#[inline]
fn try_alloc_text(len: usize, type_index: i32) -> Option<(NonNull<TextObj>, *mut u8)> {
    let mem = crate::runtime::model::object::try_alloc_in_place(text_size(len), false)?;
    let obj = mem.cast::<TextObj>();
    // SAFETY: `mem` is a fresh allocation large enough for the header, the
    // byte array and `len + 1` data bytes.
    unsafe {
        let data = mem.as_ptr().add(size_of::<TextObj>());
        *data.add(len) = 0;
        obj.as_ptr().write(TextObj {
            header: TVMFFIObject {
                combined_ref_count: AtomicU64::new(INITIAL_REF_COUNT),
                type_index,
                __padding: 0,
                deleter: Some(crate::runtime::model::object::delete_plain_in_place),
            },
            bytes: TVMFFIByteArray {
                data: data.cast(),
                size: len,
            },
        });
        Some((obj, data))
    }
}

/// The payload of a String/Bytes object over a buffer it owns (the bytes
/// and a terminating NUL), adopted rather than copied.
#[repr(C)]
struct AdoptedText {
    bytes: TVMFFIByteArray,
    _buffer: Vec<u8>,
}

// SAFETY: the array points into `_buffer`, owned and never changed.
unsafe impl Send for AdoptedText {}
// SAFETY: see `Send`.
unsafe impl Sync for AdoptedText {}

/// Texts up to this size are copied into one allocation with their object
/// (cheaper than the two an adopted buffer takes).
const ADOPT_FROM: usize = 64 << 10;

/// Makes a heap String/Bytes object of `bytes`; a large one is not copied:
/// the object takes the buffer (a JSON document, say, then needs no second
/// copy to be handed back). The terminating NUL goes into spare capacity
/// (for large buffers, a reallocation in place when there is none).
pub fn text_object_from_vec(mut bytes: Vec<u8>, kind: TextKind) -> ObjectRef {
    if bytes.len() < ADOPT_FROM {
        return new_text_object(&bytes, kind);
    }
    let len = bytes.len();
    bytes.push(0);
    let array = TVMFFIByteArray {
        data: bytes.as_ptr().cast(),
        size: len,
    };
    crate::runtime::model::object::new_object(
        kind.object_index(),
        AdoptedText {
            bytes: array,
            _buffer: bytes,
        },
    )
}

/// The payload of a Bytes object over memory it does not own.
#[repr(C)]
struct StaticBytes(TVMFFIByteArray);

// SAFETY: the array points to immutable memory that lives forever.
unsafe impl Send for StaticBytes {}
// SAFETY: see `Send`.
unsafe impl Sync for StaticBytes {}

/// A Bytes value over memory that is never freed or changed (such as a
/// loaded library's image, which stays mapped): nothing is copied, except
/// that contents short enough for a small value become one, as always.
pub fn static_bytes(bytes: &'static [u8]) -> Any {
    if bytes.len() <= SMALL_MAX {
        return make_text(bytes, TextKind::Bytes);
    }
    let array = TVMFFIByteArray {
        data: bytes.as_ptr().cast(),
        size: bytes.len(),
    };
    Any::from(crate::runtime::model::object::new_object(
        kTVMFFIBytes,
        StaticBytes(array),
    ))
}

/// The bytes of a text value of `kind` (or, for `Str`, a raw C string; for
/// `Bytes`, a byte-array pointer), the values C++'s `String`/`Bytes`
/// accept. None for other kinds or NULL pointers.
#[inline]
pub fn str_bytes_of<'a>(view: AnyView<'a>, kind: TextKind) -> Option<&'a [u8]> {
    let raw: &'a TVMFFIAny = view.raw();
    match raw.type_index {
        t if t == kind.small_index() => {
            // SAFETY: small text stores `v_bytes` with `small_str_len <= 7`
            // (clamped in case foreign code wrote garbage).
            let bytes: &'a [u8; 8] = unsafe { &raw.value.v_bytes };
            Some(&bytes[..(raw.small_str_len as usize).min(8)])
        }
        t if t == kind.object_index() => {
            let obj = view.as_object_ptr()?;
            // SAFETY: the view keeps the object alive for `'a`.
            let cell = unsafe { cell_at::<TVMFFIByteArray>(obj) }.ok()?;
            // SAFETY: as above; the cell describes the object's own bytes.
            Some(unsafe { byte_slice(*cell.as_ptr()) })
        }
        kTVMFFIByteArrayPtr if kind == TextKind::Bytes => {
            // SAFETY: byte-array pointers store `v_ptr`, valid for `'a`.
            let arr = unsafe { raw.value.v_ptr }.cast::<TVMFFIByteArray>();
            // SAFETY: checked non-null; the caller keeps it valid.
            (!arr.is_null()).then(|| unsafe { byte_slice(*arr) })
        }
        kTVMFFIRawStr if kind == TextKind::Str => {
            // SAFETY: raw strings store `v_c_str`.
            let s = unsafe { raw.value.v_c_str };
            // SAFETY: checked non-null; the caller guarantees NUL termination.
            (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_bytes())
        }
        _ => None,
    }
}

/// Text views of values, and owning a view (where a raw C string becomes a
/// String object): methods of [`AnyView`] that build on this file, which
/// builds on `any`.
impl<'a> AnyView<'a> {
    /// The text of a string-like value (`str` kinds, raw C string, byte array).
    pub fn as_str_bytes(&self) -> Option<&'a [u8]> {
        str_bytes_of(*self, TextKind::Str)
    }

    /// The content of a bytes-like value (`bytes` kinds, byte array pointer).
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        str_bytes_of(*self, TextKind::Bytes)
    }

    /// Converts to an owned value: objects gain a reference, raw strings
    /// become String objects, byte-array pointers Bytes objects, and an
    /// r-value reference is moved from (its slot left NULL), as C++ moves it
    /// into an `Any`.
    pub fn to_owned_any(&self) -> Result<Any> {
        let raw = *self.raw();
        if is_object_index(raw.type_index) {
            return Ok(match self.to_object() {
                Some(obj) => Any::from(obj),
                None => Any::NONE,
            });
        }
        match raw.type_index {
            kTVMFFIRawStr | kTVMFFIByteArrayPtr => {
                let kind = if raw.type_index == kTVMFFIRawStr {
                    TextKind::Str
                } else {
                    TextKind::Bytes
                };
                let bytes = str_bytes_of(*self, kind)
                    .ok_or_else(|| Error::value("a raw string or byte array pointer is NULL"))?;
                Ok(make_text(bytes, kind))
            }
            // SAFETY: per `from_raw`, the slot is writable and owned.
            kTVMFFIObjectRValueRef => unsafe { take_rvalue_ref(self.raw()) },
            // SAFETY: POD kinds carry no ownership; copying them is all.
            _ => Ok(unsafe { Any::from_raw(raw) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_rule_and_zero_tail() {
        let small = make_text(b"abc", TextKind::Str);
        assert_eq!(small.type_index(), kTVMFFISmallStr);
        // SAFETY: small text stores `v_bytes`.
        let bytes = unsafe { small.view().raw().value.v_bytes };
        assert_eq!(bytes, *b"abc\0\0\0\0\0");
        let seven = make_text(b"1234567", TextKind::Bytes);
        assert_eq!(seven.type_index(), kTVMFFISmallBytes);
        let heap = make_text(b"12345678", TextKind::Bytes);
        assert_eq!(heap.type_index(), kTVMFFIBytes);
        assert_eq!(heap.view().as_bytes().unwrap(), b"12345678");
        assert!(
            heap.view().as_str_bytes().is_none(),
            "bytes are not strings"
        );
    }

    #[test]
    fn embedded_nul_and_non_utf8_survive() {
        let text = b"\xff\x00nul\x00inside and long";
        let s = make_text(text, TextKind::Str);
        assert_eq!(s.view().as_str_bytes().unwrap(), text);
    }
}

#[cfg(test)]
mod small_word_tests {
    use super::*;

    #[test]
    fn small_words_hold_the_bytes_zero_padded() {
        let text = b"abcdefg";
        for n in 0..=SMALL_MAX {
            let mut expected = [0u8; 8];
            expected[..n].copy_from_slice(&text[..n]);
            assert_eq!(
                small_word(&text[..n]),
                u64::from_le_bytes(expected),
                "length {n}"
            );
        }
    }
}
