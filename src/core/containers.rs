//! The container globals (`ffi.Array*`, `ffi.List*`, `ffi.Map*`, `ffi.Dict*`,
//! `ffi.ContainerFindFirstNonCPUDevice`), with the reference's names,
//! argument conventions and error kinds.

use super::any::{Any, AnyView};
use super::error::{Error, ErrorKind, Result};
use super::function::{Args, Function, arg_type_error, register_fixed as fixed};
use super::object::ObjectRef;
use super::{map, seq};
use crate::abi::*;
use core::mem::ManuallyDrop;
use std::sync::Mutex;

/// Argument `i` as a borrowed object of `want` (valid for the call).
fn obj_arg(name: &str, args: Args<'_>, i: usize, want: i32) -> Result<ManuallyDrop<ObjectRef>> {
    let v = args.get(i);
    match v.borrow_object() {
        Some(obj) if obj.type_index() == want => Ok(obj),
        _ => Err(arg_type_error(
            name,
            i,
            &super::type_table::type_key_of(want),
            v,
        )),
    }
}

/// Argument `i` as an int.
fn int_arg(name: &str, args: Args<'_>, i: usize) -> Result<i64> {
    let v = args.get(i);
    v.as_i64().ok_or_else(|| arg_type_error(name, i, "int", v))
}

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
    if args.len() % 2 != 0 {
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
fn iter_functor(items: Vec<(Any, Any)>) -> Any {
    let position = Mutex::new(0usize);
    let f = Function::from_closure(move |args| {
        const NAME: &str = "ffi.MapForwardIterFunctor.<functor>";
        args.expect_len(NAME, 1)?;
        let command = int_arg(NAME, args, 0)?;
        let mut pos = position.lock().unwrap_or_else(|e| e.into_inner());
        if command == 2 {
            *pos += 1;
            return Ok(Any::from(*pos < items.len()));
        }
        let (k, v) = items
            .get(*pos)
            .ok_or_else(|| Error::new(ErrorKind::IndexError, "iterator is at the end"))?;
        Ok(if command == 0 { k.clone() } else { v.clone() })
    });
    Any::from(f.into_object())
}

/// The first non-CPU device of the tensors in a (nested) container.
fn first_non_cpu(value: AnyView<'_>) -> Result<Option<DLDevice>> {
    let Some(obj) = value.to_object() else {
        return Ok(None);
    };
    match obj.type_index() {
        kTVMFFITensor => {
            let dev = super::tensor::dl_tensor(&obj)?.device;
            Ok((dev.device_type != kDLCPU).then_some(dev))
        }
        t @ (kTVMFFIArray | kTVMFFIList) => {
            for item in seq::elements(&obj, t)? {
                // SAFETY: stored elements are valid.
                if let Some(d) = first_non_cpu(unsafe { AnyView::from_raw(item) })? {
                    return Ok(Some(d));
                }
            }
            Ok(None)
        }
        kTVMFFIMap | kTVMFFIDict => {
            for (_, v) in map::items(&obj)? {
                if let Some(d) = first_non_cpu(v.view())? {
                    return Ok(Some(d));
                }
            }
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Calls `add(name, function)` for every container global.
pub fn register(add: &mut dyn FnMut(&'static str, Function)) {
    add(
        "ffi.Array",
        Function::from_closure(|args| Ok(Any::from(seq::new_array(all_args(args)?)))),
    );
    add(
        "ffi.List",
        Function::from_closure(|args| Ok(Any::from(seq::new_list(all_args(args)?)))),
    );
    for (t, prefix) in [(kTVMFFIArray, "Array"), (kTVMFFIList, "List")] {
        let name: &'static str = Box::leak(format!("ffi.{prefix}GetItem").into_boxed_str());
        fixed(add, name, 2, move |a| {
            seq::get(&*obj_arg(name, a, 0, t)?, t, int_arg(name, a, 1)?)
        });
        let name: &'static str = Box::leak(format!("ffi.{prefix}Size").into_boxed_str());
        fixed(add, name, 1, move |a| {
            Ok(Any::from(
                seq::elements(&*obj_arg(name, a, 0, t)?, t)?.len() as i64,
            ))
        });
        let name: &'static str = Box::leak(format!("ffi.{prefix}Contains").into_boxed_str());
        fixed(add, name, 2, move |a| {
            Ok(Any::from(seq::contains(
                &*obj_arg(name, a, 0, t)?,
                t,
                a.get(1).as_key()?.raw(),
            )?))
        });
    }
    // A List parameter also takes an Array, converted into a fresh List (so
    // mutations land in the copy), as the reference's `List<Any>` does.
    let list = |name, a: Args<'_>| -> Result<(ObjectRef, seq::ListMut)> {
        let obj = match a.get(0).to_object() {
            Some(arr) if arr.type_index() == kTVMFFIArray => {
                let items = seq::elements(&arr, kTVMFFIArray)?
                    .iter()
                    // SAFETY: stored elements are valid.
                    .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
                    .collect::<Result<Vec<_>>>()?;
                seq::new_list(items)
            }
            _ => ObjectRef::clone(&*obj_arg(name, a, 0, kTVMFFIList)?),
        };
        let m = seq::ListMut::new(&obj)?;
        Ok((obj, m))
    };
    const NONE: Any = Any::NONE;
    fixed(add, "ffi.ListSetItem", 3, move |a| {
        let (_keep, mut l) = list("ffi.ListSetItem", a)?;
        l.set(int_arg("ffi.ListSetItem", a, 1)?, any_arg(a, 2)?)
            .map(|_| NONE)
    });
    fixed(add, "ffi.ListAppend", 2, move |a| {
        let (obj, mut l) = list("ffi.ListAppend", a)?;
        let n = seq::elements(&obj, kTVMFFIList)?.len() as i64;
        l.insert(n, vec![any_arg(a, 1)?]).map(|_| NONE)
    });
    fixed(add, "ffi.ListInsert", 3, move |a| {
        let (_keep, mut l) = list("ffi.ListInsert", a)?;
        l.insert(int_arg("ffi.ListInsert", a, 1)?, vec![any_arg(a, 2)?])
            .map(|_| NONE)
    });
    fixed(add, "ffi.ListPop", 2, move |a| {
        let (_keep, mut l) = list("ffi.ListPop", a)?;
        l.pop(int_arg("ffi.ListPop", a, 1)?)
    });
    fixed(add, "ffi.ListErase", 2, move |a| {
        let (_keep, mut l) = list("ffi.ListErase", a)?;
        let i = int_arg("ffi.ListErase", a, 1)?;
        l.pop(i).map(|_| NONE)
    });
    fixed(add, "ffi.ListEraseRange", 3, move |a| {
        let (_keep, mut l) = list("ffi.ListEraseRange", a)?;
        l.erase(
            int_arg("ffi.ListEraseRange", a, 1)?,
            int_arg("ffi.ListEraseRange", a, 2)?,
        )
        .map(|_| NONE)
    });
    fixed(add, "ffi.ListReplaceSlice", 4, move |a| {
        const NAME: &str = "ffi.ListReplaceSlice";
        let (_keep, mut l) = list(NAME, a)?;
        let replacement = obj_arg(NAME, a, 3, kTVMFFIList)?;
        let replacement: &ObjectRef = &replacement;
        // Snapshot first: the replacement may be the list itself.
        let values = seq::elements(replacement, kTVMFFIList)?
            .iter()
            // SAFETY: stored elements are valid.
            .map(|v| unsafe { AnyView::from_raw(v) }.to_owned_any())
            .collect::<Result<Vec<_>>>()?;
        let (start, stop) = (int_arg(NAME, a, 1)?, int_arg(NAME, a, 2)?);
        l.erase(start, stop)?;
        l.insert(start, values).map(|_| NONE)
    });
    fixed(add, "ffi.ListReverse", 1, move |a| {
        let (_keep, mut l) = list("ffi.ListReverse", a)?;
        l.reverse();
        Ok(NONE)
    });
    fixed(add, "ffi.ListClear", 1, move |a| {
        let (_keep, mut l) = list("ffi.ListClear", a)?;
        l.clear();
        Ok(NONE)
    });
    fixed(add, "ffi.ListReserve", 2, move |a| {
        let (_keep, mut l) = list("ffi.ListReserve", a)?;
        l.reserve(int_arg("ffi.ListReserve", a, 1)?.max(0) as usize);
        Ok(NONE)
    });
    for (t, prefix) in [(kTVMFFIMap, "Map"), (kTVMFFIDict, "Dict")] {
        let name: &'static str = Box::leak(format!("ffi.{prefix}").into_boxed_str());
        add(
            name,
            Function::from_closure(move |a| Ok(Any::from(map::new_map(t, pairs(name, a)?)?))),
        );
        let name: &'static str = Box::leak(format!("ffi.{prefix}Size").into_boxed_str());
        fixed(add, name, 1, move |a| {
            Ok(Any::from(map::size(&*obj_arg(name, a, 0, t)?)? as i64))
        });
        let name: &'static str = Box::leak(format!("ffi.{prefix}GetItem").into_boxed_str());
        fixed(add, name, 2, move |a| {
            map::at(&*obj_arg(name, a, 0, t)?, a.get(1).as_key()?.raw())
        });
        let name: &'static str = Box::leak(format!("ffi.{prefix}Count").into_boxed_str());
        fixed(add, name, 2, move |a| {
            Ok(Any::from(
                map::get(&*obj_arg(name, a, 0, t)?, a.get(1).as_key()?.raw())?.is_some() as i64,
            ))
        });
        let name: &'static str =
            Box::leak(format!("ffi.{prefix}GetItemOrMissing").into_boxed_str());
        fixed(add, name, 2, move |a| {
            let found = map::get(&*obj_arg(name, a, 0, t)?, a.get(1).as_key()?.raw())?;
            Ok(found.unwrap_or_else(|| Any::from(super::builtins::invalid_object())))
        });
        let name: &'static str =
            Box::leak(format!("ffi.{prefix}ForwardIterFunctor").into_boxed_str());
        fixed(add, name, 1, move |a| {
            Ok(iter_functor(map::items(&*obj_arg(name, a, 0, t)?)?))
        });
    }
    fixed(add, "ffi.DictSetItem", 3, |a| {
        map::set(
            &*obj_arg("ffi.DictSetItem", a, 0, kTVMFFIDict)?,
            any_arg(a, 1)?,
            any_arg(a, 2)?,
        )
        .map(|_| NONE)
    });
    fixed(add, "ffi.DictErase", 2, |a| {
        map::erase(
            &*obj_arg("ffi.DictErase", a, 0, kTVMFFIDict)?,
            a.get(1).as_key()?.raw(),
        )
        .map(|_| NONE)
    });
    fixed(add, "ffi.DictClear", 1, |a| {
        map::clear(&*obj_arg("ffi.DictClear", a, 0, kTVMFFIDict)?).map(|_| NONE)
    });
    fixed(add, "ffi.ContainerFindFirstNonCPUDevice", 1, |a| {
        let dev = first_non_cpu(a.get(0))?.unwrap_or(DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        });
        Ok(Any::device(dev))
    });
}
