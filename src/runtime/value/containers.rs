//! The container globals (`ffi.Array*`, `ffi.List*`, `ffi.Map*`, `ffi.Dict*`,
//! `ffi.ContainerFindFirstNonCPUDevice`), with the reference's names,
//! argument conventions and error kinds.

use crate::abi::*;
use crate::runtime::call::function::{Args, Function, arg_type_error};
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{ArrayT, DictT, ListT, MapT, Obj, ObjType, Param, Schema};
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::object::ObjectRef;
use crate::runtime::{value::map, value::seq};
use std::collections::HashSet;
use std::sync::Mutex;

/// Argument `i` as an owned value (raw strings become Strings).
fn any_arg(args: Args<'_>, i: usize) -> Result<Any> {
    args.get(i).to_owned_any()
}

/// All arguments as owned values.
fn all_args(args: Args<'_>) -> Result<Vec<Any>> {
    (0..args.len()).map(|i| any_arg(args, i)).collect()
}

/// Pairs `k0, v0, k1, v1, ...` of a packed call.
fn pairs(name: &str, args: Args<'_>) -> Result<Vec<(Any, Any)>> {
    if !args.len().is_multiple_of(2) {
        return Err(Error::new(
            ErrorKind::InternalError,
            format!(
                "{name} expects key/value pairs, got {} arguments",
                args.len()
            ),
        ));
    }
    (0..args.len() / 2)
        .map(|i| Ok((any_arg(args, 2 * i)?, any_arg(args, 2 * i + 1)?)))
        .collect()
}

/// `ffi.MapForwardIterFunctor`: f(0) = key, f(1) = value, f(2) = advance
/// (false at the end), over a snapshot of the entries.
fn iter_functor(items: Vec<(Any, Any)>) -> Function {
    let position = Mutex::new(0usize);
    Function::from_closure(move |args| {
        const NAME: &str = "ffi.MapForwardIterFunctor.<functor>";
        args.expect_len(NAME, 1)?;
        let v = args.get(0);
        let command = v
            .as_i64()
            .ok_or_else(|| arg_type_error(NAME, 0, "int", v))?;
        let mut pos = position.lock().unwrap_or_else(|e| e.into_inner());
        if command == 2 {
            *pos += 1;
            return Ok(Any::from(*pos < items.len()));
        }
        let (k, v) = items
            .get(*pos)
            .ok_or_else(|| Error::new(ErrorKind::IndexError, "iterator is at the end"))?;
        Ok(if command == 0 { k.clone() } else { v.clone() })
    })
}

/// The first non-CPU device of the tensors in a (nested) container.
/// Each container is looked into once: shared ones and cycles (through a
/// List or Dict) add nothing, where the reference recurses into a cycle
/// until the stack overflows.
fn first_non_cpu(value: AnyView<'_>, seen: &mut HashSet<usize>) -> Result<Option<DLDevice>> {
    let Some(obj) = value.to_object() else {
        return Ok(None);
    };
    let children: Vec<Any> = match obj.type_index() {
        kTVMFFITensor => {
            let dev = crate::runtime::value::tensor::dl_tensor(&obj)?.device;
            return Ok((dev.device_type != kDLCPU).then_some(dev));
        }
        _ if !seen.insert(obj.as_ptr() as usize) => return Ok(None),
        t @ (kTVMFFIArray | kTVMFFIList) => copy_elements(&obj, t)
            .ok_or_else(|| Error::type_error("a container element cannot be read"))?,
        kTVMFFIMap | kTVMFFIDict => map::items(&obj)?.into_iter().map(|(_, v)| v).collect(),
        _ => return Ok(None),
    };
    for child in &children {
        if let Some(d) = crate::runtime::model::depth::deep(|| first_non_cpu(child.view(), seen))? {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// A `List<Any>` parameter: a List as it is, or an Array converted into a
/// fresh List (so mutations land in the copy), as the reference's
/// `List<Any>` conversion does.
pub struct ListArg(ObjectRef);

impl Param<'_> for ListArg {
    fn schema() -> Schema {
        Schema::list_of(Schema::ANY)
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        let obj = v.to_object()?;
        match obj.type_index() {
            kTVMFFIList => Some(ListArg(obj)),
            kTVMFFIArray => Some(ListArg(seq::new_list(copy_elements(&obj, kTVMFFIArray)?))),
            _ => None,
        }
    }
}

impl ListArg {
    /// A mutable view of the list (the argument keeps it alive).
    fn edit(&self) -> Result<seq::ListMut> {
        seq::ListMut::new(&self.0)
    }
}

/// A `Dict<Any, Any>` parameter: a Dict as it is, or a Map converted into a
/// fresh Dict, as the reference's `Dict<Any, Any>` conversion does.
pub struct DictArg(ObjectRef);

impl Param<'_> for DictArg {
    fn schema() -> Schema {
        Schema::dict_of(Schema::ANY, Schema::ANY)
    }
    fn from_view(v: AnyView<'_>) -> Option<Self> {
        let obj = v.to_object()?;
        match obj.type_index() {
            kTVMFFIDict => Some(DictArg(obj)),
            kTVMFFIMap => Some(DictArg(
                map::new_map(kTVMFFIDict, map::items(&obj).ok()?).ok()?,
            )),
            _ => None,
        }
    }
}

/// Owned copies of the elements of an Array or List.
fn copy_elements(obj: &ObjectRef, t: i32) -> Option<Vec<Any>> {
    seq::elements(obj, t)
        .ok()?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any().ok())
        .collect()
}

/// The globals shared by Array and List (`K` names the bare type).
fn register_seq<K: ObjType + 'static>(g: &mut Globals<'_>, t: i32, prefix: &str) {
    let name = |suffix: &str| -> &'static str {
        Box::leak(format!("ffi.{prefix}{suffix}").into_boxed_str())
    };
    g.add(typed_fn!(name("GetItem"), |s: Obj<K>, i: i64| -> Any {
        seq::get(&s, t, i)
    }));
    g.add(typed_fn!(name("Size"), |s: Obj<K>| -> i64 {
        Ok(seq::elements(&s, t)?.len() as i64)
    }));
    g.add(typed_fn!(name("Contains"), |s: Obj<K>,
                                       v: AnyView<'_>|
     -> bool {
        seq::contains(&s, t, v.as_key()?.view())
    }));
}

/// The globals shared by Map and Dict (`K` names the bare type).
fn register_map<K: ObjType + 'static>(g: &mut Globals<'_>, t: i32, prefix: &str) {
    let name = |suffix: &str| -> &'static str {
        Box::leak(format!("ffi.{prefix}{suffix}").into_boxed_str())
    };
    let ctor = name("");
    g.packed(
        ctor,
        Function::from_closure(move |a| Ok(Any::from(map::new_map(t, pairs(ctor, a)?)?))),
    );
    g.add(typed_fn!(name("Size"), |m: Obj<K>| -> i64 {
        Ok(map::size(&m)? as i64)
    }));
    g.add(typed_fn!(name("GetItem"), |m: Obj<K>,
                                      k: AnyView<'_>|
     -> Any {
        map::at(&m, k.as_key()?.view())
    }));
    g.add(typed_fn!(name("Count"), |m: Obj<K>,
                                    k: AnyView<'_>|
     -> i64 {
        Ok(map::get(&m, k.as_key()?.view())?.is_some() as i64)
    }));
    g.add(typed_fn!(name("GetItemOrMissing"), |m: Obj<K>,
                                               k: AnyView<'_>|
     -> Any {
        let found = map::get(&m, k.as_key()?.view())?;
        Ok(found.unwrap_or_else(|| Any::from(crate::runtime::model::object::invalid_object())))
    }));
    g.add(typed_fn!(
        name("ForwardIterFunctor"),
        |m: Obj<K>| -> Function { Ok(iter_functor(map::items(&m)?)) }
    ));
}

/// Registers every container global.
pub fn register(g: &mut Globals<'_>) {
    g.packed(
        "ffi.Array",
        Function::from_closure(|args| Ok(Any::from(seq::new_array(all_args(args)?)))),
    );
    g.packed(
        "ffi.List",
        Function::from_closure(|args| Ok(Any::from(seq::new_list(all_args(args)?)))),
    );
    register_seq::<ArrayT>(g, kTVMFFIArray, "Array");
    register_seq::<ListT>(g, kTVMFFIList, "List");
    g.add(typed_fn! {
        "ffi.ListSetItem",
        |l: ListArg, i: i64, v: AnyView<'_>| -> () {
            l.edit()?.set(i, v.to_owned_any()?)
        }
    });
    g.add(typed_fn! {
        "ffi.ListAppend",
        |l: ListArg, v: AnyView<'_>| -> () {
            let n = seq::elements(&l.0, kTVMFFIList)?.len() as i64;
            l.edit()?.insert(n, vec![v.to_owned_any()?])
        }
    });
    g.add(typed_fn! {
        "ffi.ListInsert",
        |l: ListArg, i: i64, v: AnyView<'_>| -> () {
            l.edit()?.insert(i, vec![v.to_owned_any()?])
        }
    });
    g.add(typed_fn!("ffi.ListPop", |l: ListArg, i: i64| -> Any {
        l.edit()?.pop(i)
    }));
    g.add(typed_fn!("ffi.ListErase", |l: ListArg, i: i64| -> () {
        l.edit()?.pop(i).map(drop)
    }));
    g.add(typed_fn! {
        "ffi.ListEraseRange",
        |l: ListArg, start: i64, stop: i64| -> () {
            l.edit()?.erase(start, stop)
        }
    });
    g.add(typed_fn! {
        "ffi.ListReplaceSlice",
        |l: ListArg, start: i64, stop: i64, replacement: ListArg| -> () {
            // Snapshot first: the replacement may be the list itself.
            let values = copy_elements(&replacement.0, kTVMFFIList)
                .ok_or_else(|| Error::type_error("a replacement element cannot be copied"))?;
            let mut edit = l.edit()?;
            edit.erase(start, stop)?;
            edit.insert(start, values)
        }
    });
    g.add(typed_fn!("ffi.ListReverse", |l: ListArg| -> () {
        l.edit()?.reverse();
        Ok(())
    }));
    g.add(typed_fn!("ffi.ListClear", |l: ListArg| -> () {
        l.edit()?.clear();
        Ok(())
    }));
    g.add(typed_fn!("ffi.ListReserve", |l: ListArg, n: i64| -> () {
        l.edit()?.reserve(n.max(0) as usize)?;
        Ok(())
    }));
    register_map::<MapT>(g, kTVMFFIMap, "Map");
    register_map::<DictT>(g, kTVMFFIDict, "Dict");
    g.add(typed_fn! {
        "ffi.DictSetItem",
        |d: DictArg, k: AnyView<'_>, v: AnyView<'_>| -> () {
            map::set(&d.0, k.to_owned_any()?, v.to_owned_any()?)
        }
    });
    g.add(typed_fn! {
        "ffi.DictErase",
        |d: DictArg, k: AnyView<'_>| -> () {
            map::erase(&d.0, k.as_key()?.view())
        }
    });
    g.add(typed_fn!("ffi.DictClear", |d: DictArg| -> () {
        map::clear(&d.0)
    }));
    g.add(typed_fn!(
        "ffi.ContainerFindFirstNonCPUDevice",
        |v: AnyView<'_>| -> DLDevice {
            Ok(first_non_cpu(v, &mut HashSet::new())?.unwrap_or(DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            }))
        }
    ));
}
