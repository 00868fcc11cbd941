//! JSON graph serialization (`ffi.ToJSONGraph[String]`,
//! `ffi.FromJSONGraph[String]`), in the reference's format:
//! `{"root_index": i, "nodes": [{"type": key, "data": ...}, ...]}` with
//! equal values sharing one node, objects written field by field (or through
//! their `__data_to_json__`/`__data_from_json__` attributes), enum singletons
//! by index, bytes in base64. Decoding never trusts the document: indices,
//! shapes and kinds are checked and reported as `ValueError`s.

use crate::abi::*;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::typed_fn;
use crate::runtime::call::signature::{HeapStr, Str};
use crate::runtime::model::any::{Any, AnyView, is_object_index};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::lineage::is_instance;
use crate::runtime::model::object::ObjectRef;
use crate::runtime::model::string::{TextKind, make_text};
use crate::runtime::model::type_table::{self, Facts, Hook, type_key_of};
use crate::runtime::reflect::dataclass::create_empty;
use crate::runtime::reflect::field::get_field;
use crate::runtime::reflect::field::{self, convert_error};
use crate::runtime::reflect::reflected::{EnumObj, EnumStateObj, kIntEnum};
use crate::runtime::value::hash::{any_equal, any_hash};
use crate::runtime::value::json;
use crate::runtime::{value::map, value::seq};
use std::collections::{HashMap, HashSet};

fn text(s: &str) -> Any {
    make_text(s.as_bytes(), TextKind::Str)
}

/// A JSON object (a Map) from string keys.
fn object(pairs: Vec<(&str, Any)>) -> Result<Any> {
    Ok(Any::from(map::new_map(
        kTVMFFIMap,
        pairs
            .into_iter()
            .map(|(k, v)| (text(k), v))
            .collect::<Vec<_>>(),
    )?))
}

fn array(items: Vec<Any>) -> Any {
    Any::from(seq::new_array(items))
}

fn hook(facts: &Facts, hook: Hook) -> Option<Function> {
    facts.hook(hook).to_object().and_then(Function::from_object)
}

/// Whether objects of the type can be made empty (creator or `__ffi_new__`).
fn has_creator(facts: &Facts) -> bool {
    facts.creator.is_some() || hook(facts, Hook::New).is_some()
}

/// The deepest object nesting (de)serialized.
use crate::runtime::model::depth::MAX_DEPTH;

/// Whether values of `type_index` have a node form in a JSON graph.
fn has_json_form(type_index: i32) -> bool {
    is_object_index(type_index)
        || matches!(
            type_index,
            kTVMFFINone
                | kTVMFFIBool
                | kTVMFFIInt
                | kTVMFFIFloat
                | kTVMFFIDataType
                | kTVMFFIDevice
                | kTVMFFISmallStr
                | kTVMFFISmallBytes
        )
}

/// The reference's error for a value without a JSON form.
fn unserializable(type_index: i32) -> Error {
    Error::runtime(format!(
        "Cannot serialize type `{}`",
        type_key_of(type_index)
    ))
}

fn too_deep() -> Error {
    Error::value(format!(
        "JSON graph: maximum nesting depth ({MAX_DEPTH}) exceeded"
    ))
}

#[derive(Default)]
struct Serializer {
    depth: usize,
    nodes: Vec<Any>,
    /// Node indices by `AnyHash` of their value.
    index: HashMap<u64, Vec<(Any, i64)>>,
    active: HashSet<usize>,
}

/// `ffi.ToJSONGraph(value, metadata)`.
pub fn to_json_graph(value: AnyView<'_>, metadata: AnyView<'_>) -> Result<Any> {
    let mut s = Serializer::default();
    let root = s.node(&value.to_owned_any()?)?;
    let mut pairs = vec![("root_index", Any::from(root)), ("nodes", array(s.nodes))];
    if metadata.type_index() != kTVMFFINone {
        pairs.push(("metadata", metadata.to_owned_any()?));
    }
    object(pairs)
}

impl Serializer {
    fn node(&mut self, value: &Any) -> Result<i64> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep());
        }
        self.depth += 1;
        let result = crate::runtime::model::depth::deep(|| self.node_inner(value));
        self.depth -= 1;
        result
    }

    fn node_inner(&mut self, value: &Any) -> Result<i64> {
        let h = any_hash(value.view())?;
        if let Some(bucket) = self.index.get(&h) {
            for (v, i) in bucket {
                if any_equal(v.view(), value.view())? {
                    return Ok(*i);
                }
            }
        }
        let v = value.view();
        // An object kind with a NULL handle is None, as C++ reads it.
        let ti = match v.type_index() {
            t if is_object_index(t) && v.as_object_ptr().is_none() => kTVMFFINone,
            t => t,
        };
        let mut pairs = Vec::new();
        let key = type_key_of(match ti {
            kTVMFFISmallStr => kTVMFFIStr,
            kTVMFFISmallBytes => kTVMFFIBytes,
            t => t,
        });
        pairs.push(("type", text(&key)));
        match ti {
            kTVMFFINone => {}
            kTVMFFIBool | kTVMFFIInt | kTVMFFIFloat => pairs.push(("data", value.clone())),
            kTVMFFIDataType => {
                let dt = v.as_dtype().expect("a data type");
                pairs.push((
                    "data",
                    text(&crate::runtime::value::dtype::to_exact_string(dt)?),
                ));
            }
            kTVMFFIDevice => {
                let d = v.as_device().expect("a device");
                let data = array(vec![
                    Any::from(i64::from(d.device_type)),
                    Any::from(i64::from(d.device_id)),
                ]);
                pairs.push(("data", data));
            }
            kTVMFFISmallStr | kTVMFFIStr => pairs.push(("data", value.clone())),
            kTVMFFISmallBytes | kTVMFFIBytes => {
                let encoded = base64_encode(v.as_bytes().unwrap_or(b""));
                pairs.push(("data", text(&encoded)));
            }
            kTVMFFIArray | kTVMFFIList | kTVMFFIMap | kTVMFFIDict => {
                let obj = v.to_object().expect("an object");
                let ptr = obj.as_ptr() as usize;
                let mutable = matches!(ti, kTVMFFIList | kTVMFFIDict);
                if mutable && !self.active.insert(ptr) {
                    let what = if ti == kTVMFFIList { "List" } else { "Dict" };
                    return Err(Error::value(format!(
                        "Cycle detected during serialization: a {what} contains itself"
                    )));
                }
                let children: Vec<Any> = if matches!(ti, kTVMFFIArray | kTVMFFIList) {
                    seq::elements(&obj, ti)?
                        .iter()
                        // SAFETY: stored elements are valid.
                        .map(|e| unsafe { AnyView::from_raw(e) }.to_owned_any())
                        .collect::<Result<_>>()?
                } else {
                    map::items(&obj)?
                        .into_iter()
                        .flat_map(|(k, v)| [k, v])
                        .collect()
                };
                let data = children
                    .iter()
                    .map(|c| Ok(Any::from(self.node(c)?)))
                    .collect::<Result<Vec<_>>>()?;
                if mutable {
                    self.active.remove(&ptr);
                }
                pairs.push(("data", array(data)));
            }
            kTVMFFIShape => {
                let obj = v.to_object().expect("an object");
                let dims = crate::runtime::value::scalar::shape_dims(&obj).unwrap_or(&[]);
                pairs.push(("data", array(dims.iter().map(|&d| Any::from(d)).collect())));
            }
            t if is_object_index(t) => {
                let obj = v.to_object().expect("an object");
                pairs.push(("data", self.object_data(&obj)?));
            }
            t => return Err(unserializable(t)),
        }
        let index = self.nodes.len() as i64;
        self.nodes.push(object(pairs)?);
        self.index
            .entry(h)
            .or_default()
            .push((value.clone(), index));
        Ok(index)
    }

    fn object_data(&mut self, obj: &ObjectRef) -> Result<Any> {
        let ti = obj.type_index();
        let facts = type_table::facts(ti)?;
        if is_instance(ti, crate::runtime::reflect::reflected::kEnum) {
            // SAFETY: enum objects have the EnumObj layout.
            let e = unsafe { obj.payload::<EnumObj>() };
            return Ok(if is_instance(ti, kIntEnum) {
                Any::from(e.int_index)
            } else {
                e.str_index.0.clone()
            });
        }
        if let Some(f) = hook(&facts, Hook::DataToJson) {
            let o = Any::from(obj.clone());
            return f.call(&[o.view()]);
        }
        if !has_creator(&facts) {
            return Err(Error::type_error(format!(
                "Type `{}` does not support ToJSONGraph (no native creator or __ffi_new__ type attr)",
                type_key_of(ti)
            )));
        }
        let mut pairs = Vec::new();
        for info in facts.fields.iter() {
            let value = get_field(obj, info)?;
            // SAFETY: field names live in the type table's pool.
            let name = String::from_utf8_lossy(unsafe {
                crate::runtime::model::bytes::byte_slice(info.name)
            })
            .into_owned();
            // A field this type cannot write is named with its type (the
            // reference says only which value kind failed).
            let in_field =
                |e: Error| e.rewrap(|m| format!("{m} (field `{name}` of `{}`)", type_key_of(ti)));
            let data = match info.field_static_type_index {
                kTVMFFINone => Any::NONE,
                kTVMFFIBool | kTVMFFIInt | kTVMFFIFloat => value,
                kTVMFFIDataType => {
                    let dt = value
                        .view()
                        .as_dtype()
                        .ok_or_else(|| convert_error(value.view(), "DataType"))
                        .map_err(in_field)?;
                    text(&crate::runtime::value::dtype::to_exact_string(dt).map_err(in_field)?)
                }
                _ if !has_json_form(value.type_index()) => {
                    return Err(in_field(unserializable(value.type_index())));
                }
                _ => Any::from(self.node(&value)?),
            };
            pairs.push((name, data));
        }
        Ok(Any::from(map::new_map(
            kTVMFFIMap,
            pairs
                .into_iter()
                .map(|(k, v)| (text(&k), v))
                .collect::<Vec<_>>(),
        )?))
    }
}

/// `ffi.FromJSONGraph(json)`.
pub fn from_json_graph(value: AnyView<'_>) -> Result<Any> {
    from_json_graph_owned(value.to_owned_any()?)
}

/// `ffi.FromJSONGraphString(text)`: nodes are decoded as they are parsed
/// (a graph as serializers write it lists every node after the nodes it
/// refers to), and each node's JSON is released once decoded, so reading
/// costs about what the objects made cost, not the whole JSON document as
/// objects besides. A node that refers to a later one (or fails) waits for
/// the walk from the root, which decodes only what the root reaches.
pub fn from_json_graph_string(text: &[u8]) -> Result<Any> {
    let mut d = Deserializer::new(Vec::new());
    d.streaming = true;
    let graph = json::parse_graph(text, &mut |node| {
        d.offer(node);
        Ok(())
    })?;
    d.streaming = false;
    let (root_index, nodes) = graph_parts(&graph)?;
    if !nodes.is_empty() {
        // A second `nodes` key, not streamed: it is the graph's.
        d = Deserializer::new(nodes);
    }
    drop(graph);
    let root = d.index(root_index)?;
    d.run(root)
}

/// [`from_json_graph`] of a graph the caller hands over: once its nodes are
/// taken out, the graph's own containers are released (when nothing else
/// holds them), and each node's JSON once it is decoded.
fn from_json_graph_owned(value: Any) -> Result<Any> {
    let (root_index, nodes) = graph_parts(&value)?;
    drop(value);
    let mut d = Deserializer::new(nodes);
    let root = d.index(root_index)?;
    d.run(root)
}

/// The `root_index` and the `nodes` of a JSON graph.
fn graph_parts(value: &Any) -> Result<(i64, Vec<Any>)> {
    let root = value
        .view()
        .to_object()
        .filter(|o| o.type_index() == kTVMFFIMap)
        .ok_or_else(|| Error::value("Invalid JSON Object Graph, expected an object"))?;
    let root_index = get(&root, "root_index")
        .and_then(|v| v.view().as_i64().filter(|_| v.type_index() == kTVMFFIInt))
        .ok_or_else(|| {
            Error::value("Invalid JSON Object Graph, expected `root_index` integer field")
        })?;
    let nodes = get(&root, "nodes")
        .and_then(|v| v.view().to_object())
        .filter(|o| o.type_index() == kTVMFFIArray)
        .ok_or_else(|| Error::value("Invalid JSON Object Graph, expected `nodes` array field"))?;
    let nodes = seq::elements(&nodes, kTVMFFIArray)?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|e| unsafe { AnyView::from_raw(e) }.to_owned_any())
        .collect::<Result<_>>()?;
    Ok((root_index, nodes))
}

/// `map[key]` of a JSON object.
fn get(obj: &ObjectRef, key: &str) -> Option<Any> {
    map::get(obj, text(key).view()).ok().flatten()
}

fn as_i64(v: &Any) -> Result<i64> {
    v.view()
        .as_i64()
        .filter(|_| v.type_index() == kTVMFFIInt)
        .ok_or_else(|| convert_error(v.view(), "int"))
}

fn as_str(v: &Any) -> Result<&[u8]> {
    v.view()
        .as_str_bytes()
        .ok_or_else(|| convert_error(v.view(), "str"))
}

fn as_items(v: &Any) -> Result<Vec<Any>> {
    let obj = v
        .view()
        .to_object()
        .filter(|o| matches!(o.type_index(), kTVMFFIArray | kTVMFFIList))
        .ok_or_else(|| convert_error(v.view(), "Array<Any>"))?;
    seq::elements(&obj, obj.type_index())?
        .iter()
        // SAFETY: stored elements are valid.
        .map(|e| unsafe { AnyView::from_raw(e) }.to_owned_any())
        .collect()
}

/// Where a node of the graph is in its decoding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NodeState {
    /// Not started.
    New,
    /// Started and waiting for nodes it refers to: it is on the path from
    /// the root, so a reference back to it is a cycle.
    Started,
    /// Decoded.
    Done,
}

struct Deserializer {
    /// Type indices by key, as looked up so far.
    type_indices: HashMap<Vec<u8>, i32>,
    /// Each node's JSON, released once it is decoded.
    nodes: Vec<Any>,
    decoded: Vec<Option<Any>>,
    state: Vec<NodeState>,
    /// The nodes an attempt at decoding referred to before they were
    /// decoded.
    pending: Vec<usize>,
    /// Whether nodes are still arriving (see [`Deserializer::offer`]): an
    /// index past the last one is then a node not parsed yet.
    streaming: bool,
}

impl Deserializer {
    fn new(nodes: Vec<Any>) -> Self {
        Deserializer {
            type_indices: HashMap::new(),
            decoded: vec![None; nodes.len()],
            state: vec![NodeState::New; nodes.len()],
            nodes,
            pending: Vec::new(),
            streaming: false,
        }
    }

    /// Takes the next node as it is parsed and decodes it at once when every
    /// node it refers to is decoded already; otherwise (or if decoding it
    /// fails) it waits, with its JSON, for [`Deserializer::run`].
    fn offer(&mut self, node: Any) {
        let i = self.nodes.len();
        self.nodes.push(node);
        self.decoded.push(None);
        self.state.push(NodeState::Started);
        self.pending.clear();
        let node = self.nodes[i].clone();
        match self.decode(&node) {
            Ok(value) if self.pending.is_empty() => {
                self.decoded[i] = Some(value);
                self.state[i] = NodeState::Done;
                self.nodes[i] = Any::NONE;
            }
            _ => self.state[i] = NodeState::New,
        }
    }

    fn type_index(&mut self, key: &[u8]) -> Result<i32> {
        if let Some(&i) = self.type_indices.get(key) {
            return Ok(i);
        }
        let i = type_table::key_to_index(key)?;
        self.type_indices.insert(key.to_vec(), i);
        Ok(i)
    }

    /// The position of node `index`, if the graph has it.
    fn index(&self, index: i64) -> Result<usize> {
        usize::try_from(index)
            .ok()
            .filter(|&i| i < self.nodes.len())
            .ok_or_else(|| {
                Error::value(format!(
                    "Invalid JSON Object Graph: invalid node index {index}"
                ))
            })
    }

    /// The value of node `index` for the node being decoded: decoded
    /// already, else a placeholder while the node is noted as pending (the
    /// attempt is then made again once it is decoded). A reference to a
    /// node on the path from the root is a cycle, which a well-formed
    /// graph never has (the reference recurses into it until the stack
    /// runs out).
    fn node(&mut self, index: i64) -> Result<Any> {
        if self.streaming && usize::try_from(index).is_ok_and(|i| i >= self.nodes.len()) {
            // Not parsed yet: the node waits for the walk from the root.
            self.pending.push(usize::MAX);
            return Ok(Any::NONE);
        }
        let i = self.index(index)?;
        match self.state[i] {
            NodeState::Done => Ok(self.decoded[i].clone().unwrap_or(Any::NONE)),
            NodeState::Started => Err(Error::value(format!(
                "Invalid JSON Object Graph: node {index} refers to itself"
            ))),
            NodeState::New => {
                self.pending.push(i);
                Ok(Any::NONE)
            }
        }
    }

    /// Decodes node `root` and every node it refers to, depth-first with a
    /// stack of our own (a 10^6-deep chain needs no deep recursion). A node
    /// is attempted once; if it refers to nodes not yet decoded, they are
    /// decoded first and it is attempted once more, so each node costs at
    /// most two attempts.
    fn run(&mut self, root: usize) -> Result<Any> {
        let mut stack = vec![root];
        let mut depth = 0usize;
        while let Some(&i) = stack.last() {
            match self.state[i] {
                NodeState::Done => {
                    stack.pop();
                    continue;
                }
                NodeState::New => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(too_deep());
                    }
                    self.state[i] = NodeState::Started;
                }
                NodeState::Started => {}
            }
            let node = self.nodes[i].clone();
            self.pending.clear();
            let attempt = self.decode(&node);
            if !self.pending.is_empty() {
                // Decoded first, in the order they were referred to.
                let pending = core::mem::take(&mut self.pending);
                stack.extend(pending.into_iter().rev());
                continue;
            }
            self.decoded[i] = Some(attempt?);
            self.state[i] = NodeState::Done;
            self.nodes[i] = Any::NONE;
            depth -= 1;
            stack.pop();
        }
        Ok(self.decoded[root].clone().unwrap_or(Any::NONE))
    }

    fn decode(&mut self, node: &Any) -> Result<Any> {
        let obj = node
            .view()
            .to_object()
            .filter(|o| o.type_index() == kTVMFFIMap)
            .ok_or_else(|| convert_error(node.view(), "Map<str, Any>"))?;
        let key = get(&obj, "type").ok_or_else(|| {
            Error::new(
                crate::runtime::model::error::ErrorKind::KeyError,
                "key is not in Map",
            )
        })?;
        let type_index = self.type_index(as_str(&key)?)?;
        let data = || {
            get(&obj, "data").ok_or_else(|| {
                Error::new(
                    crate::runtime::model::error::ErrorKind::KeyError,
                    "key is not in Map",
                )
            })
        };
        Ok(match type_index {
            kTVMFFINone => Any::NONE,
            kTVMFFIBool => {
                let d = data()?;
                Any::from(
                    d.view()
                        .as_i64()
                        .ok_or_else(|| convert_error(d.view(), "bool"))?
                        != 0,
                )
            }
            kTVMFFIInt => Any::from(as_i64(&data()?)?),
            kTVMFFIFloat => {
                let d = data()?;
                Any::from(
                    d.view()
                        .as_f64()
                        .ok_or_else(|| convert_error(d.view(), "float"))?,
                )
            }
            kTVMFFIDataType => Any::dtype(crate::runtime::value::dtype::from_string(as_str(
                &data()?,
            )?)?),
            kTVMFFIDevice => {
                let items = as_items(&data()?)?;
                if items.len() != 2 {
                    return Err(Error::value(format!(
                        "Invalid JSON Object Graph: Device data must be an array of [device_type, device_id], got {} element(s)",
                        items.len()
                    )));
                }
                let num = |v: &Any| -> Result<i32> {
                    i32::try_from(as_i64(v)?).map_err(|_| convert_error(v.view(), "int"))
                };
                Any::device(DLDevice {
                    device_type: num(&items[0])?,
                    device_id: num(&items[1])?,
                })
            }
            kTVMFFIStr => make_text(as_str(&data()?)?, TextKind::Str),
            kTVMFFIBytes => make_text(&base64_decode(as_str(&data()?)?)?, TextKind::Bytes),
            kTVMFFIArray | kTVMFFIList => {
                let items = as_items(&data()?)?
                    .iter()
                    .map(|i| self.node(as_i64(i)?))
                    .collect::<Result<Vec<_>>>()?;
                Any::from(if type_index == kTVMFFIArray {
                    seq::new_array(items)
                } else {
                    seq::new_list(items)
                })
            }
            kTVMFFIMap | kTVMFFIDict => {
                let items = as_items(&data()?)?;
                if items.len() % 2 != 0 {
                    return Err(Error::value(format!(
                        "Invalid JSON Object Graph: Map/Dict data must contain an even number of [key, value] entries, got {}",
                        items.len()
                    )));
                }
                let mut pairs = Vec::with_capacity(items.len() / 2);
                for kv in items.chunks_exact(2) {
                    pairs.push((self.node(as_i64(&kv[0])?)?, self.node(as_i64(&kv[1])?)?));
                }
                Any::from(map::new_map(type_index, pairs)?)
            }
            kTVMFFIShape => {
                let dims = as_items(&data()?)?
                    .iter()
                    .map(as_i64)
                    .collect::<Result<Vec<_>>>()?;
                Any::from(crate::runtime::value::scalar::new_shape(&dims))
            }
            t => self.decode_object(t, &data()?)?,
        })
    }

    fn decode_object(&mut self, type_index: i32, data: &Any) -> Result<Any> {
        let facts = type_table::facts(type_index)?;
        if is_instance(type_index, crate::runtime::reflect::reflected::kEnum) {
            let key = if is_instance(type_index, kIntEnum) {
                Any::from(as_i64(data)?)
            } else {
                make_text(as_str(data)?, TextKind::Str)
            };
            return enum_by_index(type_index, &key);
        }
        if let Some(f) = hook(&facts, Hook::DataFromJson) {
            return f.call(&[data.view()]);
        }
        let obj = create_empty(type_index)?;
        let fields_data = data
            .view()
            .to_object()
            .filter(|o| o.type_index() == kTVMFFIMap)
            .ok_or_else(|| convert_error(data.view(), "Map<str, Any>"))?;
        for info in facts.fields.iter() {
            let (name, addr) = (field::field_name(info), field::field_addr(&obj, info));
            match map::get(&fields_data, make_text(name, TextKind::Str).view())? {
                Some(d) => {
                    let value = match info.field_static_type_index {
                        kTVMFFINone => Any::NONE,
                        kTVMFFIBool | kTVMFFIInt | kTVMFFIFloat => d,
                        kTVMFFIDataType => {
                            Any::dtype(crate::runtime::value::dtype::from_string(as_str(&d)?)?)
                        }
                        _ => self.node(as_i64(&d)?)?,
                    };
                    // SAFETY: `info` is a field of `obj`'s type.
                    unsafe { field::call_setter(info, addr, value.view().raw())? };
                }
                // SAFETY: as above.
                None => unsafe { field::set_missing(info, addr, type_index)? },
            }
        }
        Ok(Any::from(obj))
    }
}

/// The enum singleton of `type_index` with integer or string index `key`.
fn enum_by_index(type_index: i32, key: &Any) -> Result<Any> {
    let state =
        type_table::attr_value("__ffi_enum__", type_index).and_then(|s| s.view().to_object());
    if let Some(state) =
        state.filter(|s| s.type_index() == crate::runtime::reflect::reflected::kEnumState)
    {
        // SAFETY: EnumState objects have the EnumStateObj layout.
        let indexes = unsafe { state.payload::<EnumStateObj>() }.indexes.clone();
        if let Some(found) = indexes
            .map(|d| map::get(&d, key.view()))
            .transpose()?
            .flatten()
        {
            return Ok(found);
        }
    }
    let shown = crate::runtime::algo::repr::repr_print(key.view())
        .unwrap_or_default()
        .0;
    let shown = shown.trim_matches('"');
    Err(Error::value(format!(
        "Enum `{}` has no instance with index {shown}",
        type_key_of(type_index)
    )))
}

/// The widest indent `ffi.json.Stringify` writes.
const MAX_INDENT: usize = 1 << 12;

/// Registers the JSON and JSON graph globals.
pub fn register(g: &mut Globals<'_>) {
    // These take `Any` in the reference: arguments are owned first (a raw C
    // string becomes a String), which shows in their messages.
    g.add(typed_fn! {
        "ffi.ToJSONGraph",
        |v: AnyView<'_>, meta: AnyView<'_>| -> Any {
            to_json_graph(v.to_owned_any()?.view(), meta)
        }
    });
    g.add(typed_fn! {
        "ffi.ToJSONGraphString",
        |v: AnyView<'_>, meta: AnyView<'_>| -> HeapStr {
            let graph = to_json_graph(v.to_owned_any()?.view(), meta)?;
            Ok(HeapStr(json::stringify(graph.view(), 0)?.into_bytes()))
        }
    });
    g.add(typed_fn!("ffi.FromJSONGraph", |v: AnyView<'_>| -> Any {
        from_json_graph(v)
    }));
    g.add(typed_fn!("ffi.FromJSONGraphString", |s: Str<'_>| -> Any {
        from_json_graph_string(s.0)
    }));
    g.add(typed_fn!("ffi.json.Parse", |s: Str<'_>| -> Any {
        json::parse(s.0)
    }));
    // The indent is a C++ `int` as in the reference (a larger value does not
    // convert); a negative one indents nothing. Ours refuses indents above
    // MAX_INDENT, where the reference tries to allocate gigabytes per line.
    g.add(typed_fn! {
        "ffi.json.Stringify",
        |v: AnyView<'_>, indent: Option<i32>| -> HeapStr {
            let indent = usize::try_from(indent.unwrap_or(0)).unwrap_or(0);
            if indent > MAX_INDENT {
                return Err(Error::value(format!(
                    "json.Stringify: indent {indent} is larger than {MAX_INDENT}"
                )));
            }
            Ok(HeapStr(
                json::stringify(v.to_owned_any()?.view(), indent)?.into_bytes(),
            ))
        }
    });
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(BASE64[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with padding. The reference reads outside its
/// decode table on characters beyond `z`; ours rejects any non-alphabet
/// character with a `ValueError`.
pub fn base64_decode(text: &[u8]) -> Result<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return Err(Error::value("invalid base64 encoding"));
    }
    let value = |c: u8| -> Result<u32> {
        match c {
            b'=' => Ok(0),
            _ => BASE64
                .iter()
                .position(|&b| b == c)
                .map(|p| p as u32)
                .ok_or_else(|| Error::value(format!("invalid base64 character {:?}", c as char))),
        }
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for q in text.chunks_exact(4) {
        let n = (value(q[0])? << 18) | (value(q[1])? << 12) | (value(q[2])? << 6) | value(q[3])?;
        out.push((n >> 16) as u8);
        if q[2] != b'=' {
            out.push((n >> 8) as u8);
        }
        if q[3] != b'=' {
            out.push(n as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        for data in [&b""[..], b"a", b"ab", b"abc", b"\x00\xff\x10\x80"] {
            assert_eq!(base64_decode(base64_encode(data).as_bytes()).unwrap(), data);
        }
        assert_eq!(base64_encode(b"ab"), "YWI=");
        assert!(base64_decode(b"YW\xffI").is_err());
    }
}
