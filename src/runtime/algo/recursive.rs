//! What the recursive reflection algorithms share (`recursive_compare`,
//! `recursive_hash`, `repr`): the reference's semantics of the walks over
//! containers and reflected objects, the elements, fields and hooks they
//! read. Each algorithm recurses one level at a time through
//! [`crate::runtime::model::depth::deep`] (so no thread's stack overflows);
//! nesting deeper than [`MAX_DEPTH`](crate::runtime::model::depth::MAX_DEPTH),
//! the reference's bound, is refused with a `ValueError`.

use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::Result;
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, str_bytes_of};
use crate::runtime::model::type_table::{self, fields_with_ancestors};
use crate::runtime::reflect::field::get_field;
use crate::runtime::value::seq;

/// The elements of an Array or List, owned.
pub(super) fn elements(obj: &ObjectRef) -> Result<Vec<Any>> {
    seq::elements(obj, obj.type_index())?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
        .collect()
}

/// The fields of `obj`'s type without the `skip` flags, with their values.
pub(super) fn field_values(obj: &ObjectRef, skip: i32) -> Result<Vec<(TVMFFIFieldInfo, Any)>> {
    fields_with_ancestors(obj.type_index())?
        .into_iter()
        .filter(|f| f.flags & i64::from(skip) == 0)
        .map(|f| {
            let v = get_field(obj, &f)?;
            Ok((f, v))
        })
        .collect()
}

/// The Function in attribute `name` of `type_index`, if any.
pub(super) fn hook(name: &str, type_index: i32) -> Option<Function> {
    type_table::attr_value(name, type_index)
        .and_then(|v| v.view().to_object())
        .and_then(Function::from_object)
}

/// The text of a string value (small or heap), if it is one.
pub(super) fn text_of(v: AnyView<'_>, kind: TextKind) -> Option<&[u8]> {
    let ok = match kind {
        TextKind::Str => matches!(v.type_index(), kTVMFFIStr | kTVMFFISmallStr),
        TextKind::Bytes => matches!(v.type_index(), kTVMFFIBytes | kTVMFFISmallBytes),
    };
    if ok { str_bytes_of(v, kind) } else { None }
}
