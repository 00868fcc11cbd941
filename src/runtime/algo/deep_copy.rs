//! `ffi.DeepCopy`: an iterative copy of an object graph that preserves
//! sharing and cycles, driven by reflection.
//!
//! Lists, Dicts and reflected objects (copied with their
//! `__ffi_shallow_copy__` attribute, then field by field) register their copy
//! before their children are copied, so cycles through them resolve to the
//! copy. Arrays and Maps are built from their copied children; a cycle back
//! into one that is still being copied first sees the original, which a
//! final pass replaces. Strings, bytes, shapes, big integers and enum
//! singletons are shared, not copied.

use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::type_table::{self, fields_with_ancestors, type_key_of};
use crate::runtime::reflect::field::{get_field, set_field};
use crate::runtime::{value::map, value::seq};
use std::collections::{HashMap, HashSet};

/// The deepest object nesting copied (the reference's bound).
use crate::runtime::model::depth::MAX_DEPTH;

/// What a frame copies.
enum Kind {
    Array,
    List,
    Map,
    Dict,
    Object(Vec<TVMFFIFieldInfo>),
}

struct Frame {
    original: ObjectRef,
    kind: Kind,
    /// Elements, keys and values interleaved, or field values.
    children: Vec<Any>,
    next: usize,
    /// The copy, for kinds registered before their children.
    copy: Option<ObjectRef>,
    /// Copied children of Arrays and Maps; the pending key of a Dict.
    resolved: Vec<Any>,
}

#[derive(Default)]
struct Copier {
    copies: HashMap<*mut TVMFFIObject, Any>,
    in_progress: HashSet<*mut TVMFFIObject>,
    deferred: bool,
    stack: Vec<Frame>,
}

/// `ffi.DeepCopy(value)`.
pub fn deep_copy(value: AnyView<'_>) -> Result<Any> {
    Copier::default().run(value.to_owned_any()?)
}

fn same(a: &Any, b: &Any) -> bool {
    a.view().as_object_ptr() == b.view().as_object_ptr() && a.type_index() == b.type_index()
}

impl Copier {
    fn run(&mut self, value: Any) -> Result<Any> {
        if let Some(done) = self.immediate(&value) {
            return Ok(done);
        }
        self.push(value)?;
        let result = loop {
            let frame = self.stack.last_mut().expect("a frame");
            if frame.next < frame.children.len() {
                let child = frame.children[frame.next].clone();
                frame.next += 1;
                match self.immediate(&child) {
                    Some(done) => self.feed(done)?,
                    None => self.push(child)?,
                }
                continue;
            }
            let frame = self.stack.pop().expect("a frame");
            let done = self.finalize(frame)?;
            if self.stack.is_empty() {
                break done;
            }
            self.feed(done)?;
        };
        if self.deferred {
            self.fix_deferred()?;
        }
        Ok(result)
    }

    /// The result for values with nothing to copy (or already copied).
    fn immediate(&mut self, value: &Any) -> Option<Any> {
        // Plain values (and None objects) are copied as they are.
        let Some(obj) = value.view().as_object_ptr() else {
            return Some(value.clone());
        };
        let obj = obj.as_ptr();
        if let Some(copy) = self.copies.get(&obj) {
            return Some(copy.clone());
        }
        if self.in_progress.contains(&obj) {
            self.deferred = true;
            return Some(value.clone());
        }
        let ti = value.type_index();
        let shared = matches!(ti, kTVMFFIStr | kTVMFFIBytes | kTVMFFIShape | kTVMFFIBigInt)
            || crate::runtime::model::lineage::is_instance(
                ti,
                crate::runtime::reflect::reflected::kEnum,
            );
        shared.then(|| value.clone())
    }

    fn push(&mut self, value: Any) -> Result<()> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Error::value(format!(
                "ObjectGraphDFS: maximum stack depth ({MAX_DEPTH}) exceeded"
            )));
        }
        let original = value.view().to_object().expect("an object");
        let ti = original.type_index();
        let key = original.as_ptr();
        let mut copy = None;
        let (kind, children) = match ti {
            kTVMFFIArray | kTVMFFIList => {
                let items = seq::elements(&original, ti)?
                    .iter()
                    // SAFETY: stored elements are valid.
                    .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
                    .collect::<Result<Vec<_>>>()?;
                if ti == kTVMFFIArray {
                    self.in_progress.insert(key);
                    (Kind::Array, items)
                } else {
                    let list = seq::new_list(Vec::new());
                    self.copies.insert(key, Any::from(list.clone()));
                    copy = Some(list);
                    (Kind::List, items)
                }
            }
            kTVMFFIMap | kTVMFFIDict => {
                let items: Vec<Any> = map::items(&original)?
                    .into_iter()
                    .flat_map(|(k, v)| [k, v])
                    .collect();
                if ti == kTVMFFIMap {
                    self.in_progress.insert(key);
                    (Kind::Map, items)
                } else {
                    let dict = map::new_map(kTVMFFIDict, Vec::new())?;
                    self.copies.insert(key, Any::from(dict.clone()));
                    copy = Some(dict);
                    (Kind::Dict, items)
                }
            }
            _ => {
                let shallow = type_table::attr_value("__ffi_shallow_copy__", ti)
                    .and_then(|f| f.view().to_object())
                    .and_then(Function::from_object)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::InternalError,
                            format!(
                                "Cannot deep copy object of type \"{}\" because it is not copy-constructible",
                                type_key_of(ti)
                            ),
                        )
                    })?;
                let dup = shallow
                    .call(&[value.view()])?
                    .view()
                    .to_object()
                    .ok_or_else(|| {
                        Error::type_error("__ffi_shallow_copy__ did not return an object")
                    })?;
                self.copies.insert(key, Any::from(dup.clone()));
                copy = Some(dup);
                let fields = fields_with_ancestors(ti)?;
                let values = fields
                    .iter()
                    .map(|f| get_field(&original, f))
                    .collect::<Result<Vec<_>>>()?;
                (Kind::Object(fields), values)
            }
        };
        self.stack.push(Frame {
            original,
            kind,
            children,
            next: 0,
            copy,
            resolved: Vec::new(),
        });
        Ok(())
    }

    /// Hands a copied child to the frame on top.
    fn feed(&mut self, done: Any) -> Result<()> {
        let frame = self.stack.last_mut().expect("a frame");
        match &frame.kind {
            Kind::Array | Kind::Map => frame.resolved.push(done),
            Kind::List => {
                let list = frame.copy.as_ref().expect("a list copy");
                let n = seq::elements(list, kTVMFFIList)?.len() as i64;
                seq::ListMut::new(list)?.insert(n, vec![done])?;
            }
            Kind::Dict => {
                if frame.next % 2 == 1 {
                    frame.resolved.push(done);
                } else {
                    let key = frame.resolved.pop().expect("a pending key");
                    map::set(frame.copy.as_ref().expect("a dict copy"), key, done)?;
                }
            }
            Kind::Object(fields) => {
                let i = frame.next - 1;
                if !same(&frame.children[i], &done) {
                    set_field(
                        frame.copy.as_ref().expect("an object copy"),
                        &fields[i],
                        &done,
                    )?;
                }
            }
        }
        Ok(())
    }

    fn finalize(&mut self, frame: Frame) -> Result<Any> {
        let key = frame.original.as_ptr();
        let built = match frame.kind {
            Kind::Array => seq::new_array(frame.resolved),
            Kind::Map => {
                let mut pairs = Vec::with_capacity(frame.resolved.len() / 2);
                let mut it = frame.resolved.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    pairs.push((k, v));
                }
                map::new_map(kTVMFFIMap, pairs)?
            }
            _ => return Ok(Any::from(frame.copy.expect("a registered copy"))),
        };
        self.in_progress.remove(&key);
        let built = Any::from(built);
        self.copies.insert(key, built.clone());
        Ok(built)
    }

    /// The copy of `value` if it is an original that was copied.
    fn replacement(&self, value: &Any) -> Option<Any> {
        let obj = value.view().as_object_ptr()?.as_ptr();
        self.copies.get(&obj).filter(|c| !same(c, value)).cloned()
    }

    /// Replaces originals left in mutable copies by cycles through Arrays
    /// and Maps that were being copied at the time.
    fn fix_deferred(&self) -> Result<()> {
        for copy in self.copies.values() {
            let Some(obj) = copy.view().to_object() else {
                continue;
            };
            let ti = obj.type_index();
            if ti == kTVMFFIList {
                let items = seq::elements(&obj, kTVMFFIList)?
                    .iter()
                    // SAFETY: stored elements are valid.
                    .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
                    .collect::<Result<Vec<_>>>()?;
                for (i, item) in items.iter().enumerate() {
                    if let Some(new) = self.replacement(item) {
                        seq::ListMut::new(&obj)?.set(i as i64, new)?;
                    }
                }
            } else if ti == kTVMFFIDict {
                for (k, v) in map::items(&obj)? {
                    let (nk, nv) = (self.replacement(&k), self.replacement(&v));
                    if nk.is_some() || nv.is_some() {
                        map::erase(&obj, k.view())?;
                        map::set(&obj, nk.unwrap_or(k), nv.unwrap_or(v))?;
                    }
                }
            } else if ti >= kTVMFFIStaticObjectEnd && is_object_index(ti) {
                for info in fields_with_ancestors(ti)? {
                    let value = get_field(&obj, &info)?;
                    if let Some(new) = self.replacement(&value) {
                        set_field(&obj, &info, &new)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_containers_of_plain_values_and_keeps_sharing() {
        let inner = Any::from(seq::new_list(vec![Any::from(1i64), Any::from(2.5)]));
        let outer = Any::from(seq::new_array(vec![inner.clone(), inner, Any::NONE]));
        let copy = deep_copy(outer.view()).unwrap();
        let items = seq::elements(&copy.view().to_object().unwrap(), kTVMFFIArray)
            .unwrap()
            .to_vec();
        assert_eq!(items.len(), 3);
        // The shared list is copied once and shared in the copy.
        // SAFETY: plain reads of the stored values.
        let (a, b) = unsafe { (items[0].value.v_obj, items[1].value.v_obj) };
        assert_eq!(a, b);
        assert_ne!(a, outer.view().to_object().unwrap().as_ptr());
        assert_eq!(items[2].type_index, kTVMFFINone);
    }
}
