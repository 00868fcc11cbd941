//! Conversions of Rust collections: `Vec<T>` to and from `ffi.Array`,
//! `HashMap<K, V>` to and from `ffi.Map` (built and read through the
//! runtime's container globals).

use crate::any::{Any, AnyView};
use crate::convert::{FromAny, IntoAny, TypeSchema};
use crate::error::Result;
use crate::function::{Function, call_global};
use crate::sys::{self, RawAny};
use std::collections::HashMap;
use std::hash::Hash;

impl<T: IntoAny> IntoAny for Vec<T> {
    fn into_any(self) -> Result<Any> {
        let items = self
            .into_iter()
            .map(IntoAny::into_any)
            .collect::<Result<Vec<Any>>>()?;
        let views: Vec<AnyView<'_>> = items.iter().map(Any::view).collect();
        call_global("ffi.Array", &views)
    }
}

/// The elements of an `ffi.Array` a view holds.
fn array_items<'a>(v: AnyView<'a>) -> Option<&'a [RawAny]> {
    if v.type_index() != sys::ARRAY {
        return None;
    }
    let h = v.object()?;
    // SAFETY: an array's cell is a `TVMFFISeqCell` whose `data` holds `size`
    // values, alive while the array is (for 'a).
    let cell = unsafe {
        &*h.cast::<u8>()
            .add(size_of::<sys::ObjectHeader>())
            .cast::<sys::SeqCell>()
    };
    let len = usize::try_from(cell.size).ok()?;
    if len == 0 {
        return Some(&[]);
    }
    // SAFETY: as above.
    Some(unsafe { core::slice::from_raw_parts(cell.data.cast::<RawAny>(), len) })
}

impl<'a, T: FromAny<'a>> FromAny<'a> for Vec<T> {
    fn schema() -> TypeSchema {
        TypeSchema::generic("ffi.Array", "Array", vec![T::schema()])
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        array_items(v)?
            .iter()
            .map(|raw| T::from_view(AnyView::new(raw)))
            .collect()
    }
}

impl<K: IntoAny, V: IntoAny> IntoAny for HashMap<K, V> {
    fn into_any(self) -> Result<Any> {
        let mut items = Vec::with_capacity(self.len() * 2);
        for (k, v) in self {
            items.push(k.into_any()?);
            items.push(v.into_any()?);
        }
        let views: Vec<AnyView<'_>> = items.iter().map(Any::view).collect();
        call_global("ffi.Map", &views)
    }
}

impl<'a, K: for<'b> FromAny<'b> + Eq + Hash, V: for<'b> FromAny<'b>> FromAny<'a> for HashMap<K, V> {
    fn schema() -> TypeSchema {
        TypeSchema::generic("ffi.Map", "Map", vec![K::schema(), V::schema()])
    }
    fn from_view(v: AnyView<'a>) -> Option<Self> {
        if v.type_index() != sys::MAP {
            return None;
        }
        let size = call_global("ffi.MapSize", &[v]).ok()?.get::<i64>()?;
        let mut out = HashMap::with_capacity(usize::try_from(size).ok()?);
        if size == 0 {
            return Some(out);
        }
        let iter = call_global("ffi.MapForwardIterFunctor", &[v]).ok()?;
        let iter = iter.get::<Function>()?;
        loop {
            let key = iter.call_any(&[0i64.into_any().ok()?.view()]).ok()?;
            let value = iter.call_any(&[1i64.into_any().ok()?.view()]).ok()?;
            out.insert(key.get::<K>()?, value.get::<V>()?);
            let more = iter.call_any(&[2i64.into_any().ok()?.view()]).ok()?;
            if !more.get::<bool>()? {
                return Some(out);
            }
        }
    }
}
