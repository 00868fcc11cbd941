//! The runtime's type table as this crate reads it: type keys and
//! ancestry.

use crate::sys;

/// The type key of a type index (`int`, `ffi.Tensor`, ...).
pub(crate) fn type_key_of(type_index: i32) -> String {
    // SAFETY: NULL or a type-table entry that lives as long as the process.
    match unsafe { sys::TVMFFIGetTypeInfo(type_index).as_ref() } {
        // SAFETY: the entry's key is readable for the process's lifetime.
        Some(info) => String::from_utf8_lossy(unsafe { info.type_key.bytes() }).into_owned(),
        None => format!("<type index {type_index}>"),
    }
}

/// Whether `type_index` is `ancestor` or derives from it.
pub(crate) fn is_instance(type_index: i32, ancestor: i32) -> bool {
    if type_index == ancestor {
        return true;
    }
    // SAFETY: NULL or a type-table entry that lives as long as the process.
    let (Some(info), Some(anc)) = (
        unsafe { sys::TVMFFIGetTypeInfo(type_index).as_ref() },
        unsafe { sys::TVMFFIGetTypeInfo(ancestor).as_ref() },
    ) else {
        return false;
    };
    if anc.type_depth >= info.type_depth || info.type_ancestors.is_null() {
        return false;
    }
    // SAFETY: `type_ancestors` holds `type_depth` entries, root first.
    let at = unsafe { *info.type_ancestors.add(anc.type_depth as usize) };
    // SAFETY: an ancestor entry is NULL or a live type-table entry.
    unsafe { at.as_ref() }.is_some_and(|a| a.type_index == ancestor)
}
