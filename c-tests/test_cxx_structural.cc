// The structural family from C++ compiled with the official headers, run on
// each library (the transcripts must match):
//  - the exported entry points: StructuralEqual::Equal / GetFirstMismatch,
//    StructuralHash::Hash, ToJSONGraph / FromJSONGraph, json::Parse /
//    Stringify, VisitErrorContext::FindAccessPaths;
//  - the header-only visitor and mutator engines (C++ visitor objects) going
//    through the library's container hooks (`__s_visit__`, `__s_mutate__`,
//    `__s_maybe_inplace_mutate__`), which call back into the C++ vtable;
//  - the library's own engines (ffi.StructuralWalk / Map / Mutate) driving
//    C++ callbacks that recurse through the library's visitor and mutator
//    objects (StructuralVisitorObj / StructuralMutatorObj layouts).
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/extra/structural_mutate.h>
#include <tvm/ffi/extra/structural_visit.h>
#include <tvm/ffi/extra/visit_error_context.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/access_path.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <string>
#include <vector>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;
using ffi::Any;
using ffi::AnyView;
using ffi::Array;
using ffi::Function;
using ffi::Map;
using ffi::String;

/*! A reflected tree node made in C++: an integer and children. */
class TNodeObj : public ffi::Object {
 public:
  int64_t value = 0;
  Array<Any> children;

  TNodeObj() = default;
  TNodeObj(int64_t value, Array<Any> children) : value(value), children(std::move(children)) {}

  static constexpr bool _type_mutable = true;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test_cxx_structural.TNode", TNodeObj, ffi::Object);
};

class TNode : public ffi::ObjectRef {
 public:
  TNode(int64_t value, Array<Any> children)
      : ObjectRef(ffi::make_object<TNodeObj>(value, std::move(children))) {}
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(TNode, ObjectRef, TNodeObj);
};

/*! An IR integer immediate: DataType and Device fields stored raw. */
class ImmObj : public ffi::Object {
 public:
  DLDataType dtype{kDLInt, 32, 1};
  DLDevice device{kDLCUDA, 1};
  int64_t value = 5;
  double f64 = 1.5;
  int8_t small = -3;
  bool flag = true;
  static constexpr bool _type_mutable = true;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test_cxx_structural.Imm", ImmObj, ffi::Object);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<ImmObj>()
      .def_rw("dtype", &ImmObj::dtype)
      .def_rw("device", &ImmObj::device)
      .def_rw("value", &ImmObj::value)
      .def_rw("f64", &ImmObj::f64)
      .def_rw("small", &ImmObj::small)
      .def_rw("flag", &ImmObj::flag);
  refl::ObjectDef<TNodeObj>()
      .def_rw("value", &TNodeObj::value)
      .def_rw("children", &TNodeObj::children);
}

static std::string Show(const Any& v);

/*! An access path as `<root>.attr[index][key]`. */
static std::string PathText(const refl::AccessPath& p) {
  std::string out = "<root>";
  for (const refl::AccessStep& step : p->ToSteps()) {
    switch (step->kind) {
      case refl::AccessKind::kAttr:
        out += "." + std::string(step->key.cast<String>());
        break;
      case refl::AccessKind::kArrayItem:
        out += "[" + Show(step->key) + "]";
        break;
      case refl::AccessKind::kMapItem:
        out += "[" + Show(step->key) + "]";
        break;
      default:
        out += "<missing " + Show(step->key) + ">";
        break;
    }
  }
  return out;
}

static std::string ShowSeq(const Array<Any>& a) {
  std::string out = "[";
  for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + Show(a[i]);
  return out + "]";
}

static std::string Show(const Any& v) {
  if (v == nullptr) return "None";
  if (auto b = v.as<bool>()) return *b ? "true" : "false";
  if (auto i = v.as<int64_t>()) return std::to_string(*i);
  if (auto s = v.as<String>()) return "'" + std::string(*s) + "'";
  if (auto n = v.as<TNode>()) {
    return "TNode(" + std::to_string((*n)->value) + ", " + ShowSeq((*n)->children) + ")";
  }
  if (auto a = v.as<Array<Any>>()) return ShowSeq(*a);
  if (auto p = v.as<refl::AccessPath>()) return PathText(*p);
  return "<" + std::to_string(v.type_index()) + ">";
}

static void Report(const char* what, const ffi::Error& e) {
  std::printf("%s: %s: %s\n", what, e.kind().c_str(), e.message().c_str());
}

static TNode Tree() {
  TNode leaf1(1, {});
  TNode leaf2(2, {String("a string longer than seven"), 3});
  return TNode(0, {leaf1, leaf2, Map<String, Any>{{"k", leaf1}}});
}

static void Exported() {
  TNode a = Tree(), b = Tree(), c(0, {TNode(1, {}), TNode(2, {String("x"), 3})});
  std::printf("Equal(a, b) = %d, Equal(a, c) = %d\n", ffi::StructuralEqual::Equal(a, b),
              ffi::StructuralEqual::Equal(a, c));
  std::printf("Hash(a) == Hash(b): %d, Hash(a) == Hash(c): %d\n",
              ffi::StructuralHash::Hash(a) == ffi::StructuralHash::Hash(b),
              ffi::StructuralHash::Hash(a) == ffi::StructuralHash::Hash(c));
  auto mismatch = ffi::StructuralEqual::GetFirstMismatch(a, c);
  if (mismatch.has_value()) {
    std::printf("first mismatch: %s vs %s\n",
                PathText((*mismatch).get<0>()).c_str(), PathText((*mismatch).get<1>()).c_str());
  }
  ffi::json::Value graph = ffi::ToJSONGraph(a);
  std::printf("graph: %s\n", std::string(ffi::json::Stringify(graph)).c_str());
  Any back = ffi::FromJSONGraph(graph);
  std::printf("round trip: %s equal=%d\n", Show(back).c_str(), ffi::StructuralEqual::Equal(a, back));
  // Every field kind of an IR immediate round-trips.
  for (DLDataType dt : {DLDataType{kDLInt, 32, 1}, DLDataType{kDLBfloat, 16, 4},
                        DLDataType{kDLFloat, 32, static_cast<uint16_t>(-4)},
                        DLDataType{kDLFloat8_e4m3fn, 8, 1}, DLDataType{kDLOpaqueHandle, 64, 1},
                        DLDataType{kDLUInt, 1, 1}}) {
    auto n = ffi::make_object<ImmObj>();
    n->dtype = dt;
    ffi::ObjectRef imm(n);
    ffi::json::Value g = ffi::ToJSONGraph(imm);
    std::printf("imm graph: %s equal=%d\n", std::string(ffi::json::Stringify(g)).c_str(),
                ffi::StructuralEqual::Equal(imm, ffi::FromJSONGraph(g)));
  }
  String err;
  ffi::json::Value doc = ffi::json::Parse(R"({"b": [1, 2.5, true, null], "a": "x"})", &err);
  std::printf("parse: %s err='%s'\n", std::string(ffi::json::Stringify(doc)).c_str(),
              std::string(err).c_str());
  std::printf("stringify indent: %s\n", std::string(ffi::json::Stringify(doc, 2)).c_str());
  for (const char* bad : {"[1, 2", "{\"a\" 1}", "tru", "[1] x"}) {
    String msg;
    ffi::json::Value v = ffi::json::Parse(bad, &msg);
    std::printf("parse %s: null=%d msg='%s'\n", bad, v == nullptr, std::string(msg).c_str());
  }
}

static void HeaderEngines() {
  TNode root = Tree();
  // A C++ walk: its visitor is a C++ StructuralVisitorObj, and the library's
  // Array and Map hooks call back into it.
  std::vector<std::string> trace;
  auto walk_result = ffi::StructuralWalk<ffi::WalkOrder::kPreOrder>(
      root, [&](int64_t v) -> ffi::Expected<ffi::WalkResult> {
        trace.push_back(std::to_string(v));
        return ffi::WalkResult::Advance();
      });
  std::printf("C++ walk: interrupted=%d ints:", walk_result.has_value());
  for (const auto& t : trace) std::printf(" %s", t.c_str());
  std::printf("\n");
  auto stopped = ffi::StructuralWalk<ffi::WalkOrder::kPostOrder>(
      root, [&](int64_t v) -> ffi::Expected<ffi::WalkResult> {
        if (v == 3) return ffi::WalkResult::Interrupt(ffi::VisitInterrupt(Any(v * 100)));
        return ffi::WalkResult::Advance();
      });
  std::printf("C++ walk interrupt: %s\n",
              stopped.has_value() ? Show((*stopped)->value).c_str() : "none");

  // A C++ map: the library's __s_mutate__ hooks copy the containers that
  // change and keep the ones that do not.
  Any mapped = ffi::StructuralMap<ffi::WalkOrder::kPostOrder>(
      Any(root), [](int64_t v) -> ffi::Expected<Any> { return Any(v * 10); });
  TNode m = mapped.cast<TNode>();
  std::printf("C++ map: %s same_root=%d\n", Show(m).c_str(), m.same_as(root));
  Any kept = ffi::StructuralMap<ffi::WalkOrder::kPostOrder>(
      Any(root), [](String s) -> ffi::Expected<Any> { return Any(s); });
  std::printf("C++ map unchanged: same_root=%d\n", kept.as<TNode>()->same_as(root));
  // Moved in: uniquely owned paths change in place.
  Array<Any> owned{1, Array<Any>{2, 3}};
  const void* before = owned.get();
  Any moved = ffi::StructuralMap<ffi::WalkOrder::kPostOrder>(
      Any(std::move(owned)), [](int64_t v) -> ffi::Expected<Any> { return Any(v + 1); });
  std::printf("C++ map moved: %s in_place=%d\n", Show(moved).c_str(),
              moved.as<Array<Any>>()->get() == before);
}

static Array<Any> Entry(int32_t type_index, Function f) { return Array<Any>{type_index, f}; }

static void LibraryEngines() {
  TNode root = Tree();
  Function walk = Function::GetGlobalRequired("ffi.StructuralWalk");
  Function visit = Function::GetGlobalRequired("ffi.StructuralVisit");
  Function map = Function::GetGlobalRequired("ffi.StructuralMap");
  Function mutate = Function::GetGlobalRequired("ffi.StructuralMutate");
  std::vector<std::string> trace;

  Function on_any = Function::FromTyped([&](AnyView v) -> Any {
    trace.push_back(std::to_string(v.type_index()));
    return Any(nullptr);
  });
  Any r = walk(root, Array<Any>{Entry(-1, on_any)}, Array<Any>{}, 1);
  std::printf("walk post: %s types:", Show(r).c_str());
  for (const auto& t : trace) std::printf(" %s", t.c_str());
  std::printf("\n");

  // A C++ callback owning the descent of TNodes: it visits only the second
  // child through the library's visitor object.
  trace.clear();
  Function own = Function::FromTyped([&](TNode n, ffi::StructuralVisitor v) -> Any {
    trace.push_back("node" + std::to_string(n->value));
    return v->Visit(n->children.size() > 1 ? n->children[1] : Any(nullptr));
  });
  Function on_int = Function::FromTyped([&](int64_t i, ffi::StructuralVisitor v) -> Any {
    trace.push_back("int" + std::to_string(i) + "@" + std::to_string(v->def_region_kind()));
    return Any(nullptr);
  });
  int32_t tnode = TNodeObj::RuntimeTypeIndex();
  r = visit(root, Array<Any>{Entry(tnode, own), Entry(kTVMFFIInt, on_int)});
  std::printf("visit: %s trace:", Show(r).c_str());
  for (const auto& t : trace) std::printf(" %s", t.c_str());
  std::printf("\n");

  Function negate = Function::FromTyped([](int64_t i) -> Any { return Any(-i); });
  r = map(root, Array<Any>{Entry(kTVMFFIInt, negate)}, Array<Any>{}, 0);
  std::printf("map pre: %s\n", Show(r).c_str());

  // A C++ mutate callback recursing through the library's mutator object.
  Function twice = Function::FromTyped([](TNode n, ffi::StructuralMutator m) -> Any {
    Any children = std::move(m->Mutate(n->children)).ValueOrUnchanged(Any(n->children));
    return TNode(n->value * 2, children.cast<Array<Any>>());
  });
  r = mutate(root, Array<Any>{Array<Any>{tnode, twice, false}});
  std::printf("mutate: %s\n", Show(r).c_str());

  // An error deep in the tree: its kind and message, the nodes it passed,
  // and the access paths to the failing node.
  Function fail = Function::FromTyped([](int64_t i) -> Any {
    if (i == 3) TVM_FFI_THROW(ValueError) << "three is not allowed";
    return Any(nullptr);
  });
  TNode chain(7, {TNode(8, {TNode(9, {3})})});
  try {
    walk(chain, Array<Any>{Entry(kTVMFFIInt, fail)}, Array<Any>{}, 0);
    std::printf("walk error: none\n");
  } catch (const ffi::Error& e) {
    Report("walk error", e);
    auto ctx = ffi::VisitErrorContext::TryGetFromError(e);
    std::printf("  context: %d nodes: %zu\n", ctx.has_value(),
                ctx.has_value() ? (*ctx)->reverse_visit_pattern.size() : 0);
    if (ctx.has_value()) {
      for (bool prefix : {false, true}) {
        Array<refl::AccessPath> paths = ffi::VisitErrorContext::FindAccessPaths(chain, *ctx, prefix);
        std::printf("  paths(prefix=%d):", prefix);
        for (const auto& p : paths) std::printf(" %s", PathText(p).c_str());
        std::printf("\n");
      }
    }
  }
  for (const char* name : {"ffi.StructuralWalk", "ffi.StructuralMap"}) {
    try {
      Function::GetGlobalRequired(name)(root, Array<Any>{Array<Any>{1, 2}}, Array<Any>{}, 0);
    } catch (const ffi::Error& e) {
      Report(name, e);
    }
  }
}

/*! A compiler's own mutator: a registered subclass of ffi.StructuralMutator
 * (its own type key and vtable) that doubles integers, and its own visitor
 * subclass that sums them. The library's receivers take them by ancestry. */
class DoublerObj : public ffi::StructuralMutatorObj {
 public:
  int64_t rewrites = 0;
  DoublerObj() : StructuralMutatorObj(&kVTable) {}

  static TVMFFIAny Mutate(ffi::StructuralMutatorObj* self, AnyView value) noexcept {
    if (auto i = value.as<int64_t>()) {
      static_cast<DoublerObj*>(self)->rewrites += 1;
      return ffi::detail::AnyUnsafe::MoveAnyToTVMFFIAny(Any(*i * 2));
    }
    return ffi::detail::ExpectedUnsafe::MoveToTVMFFIAny(
        self->DefaultMutateExpected(value, ffi::InplaceMode::kDisallow));
  }
  static TVMFFIAny NoRemap(ffi::StructuralMutatorObj*, AnyView) noexcept {
    return ffi::detail::AnyUnsafe::MoveAnyToTVMFFIAny(Any(nullptr));
  }
  static TVMFFIAny RefuseRemap(ffi::StructuralMutatorObj*, AnyView, AnyView) noexcept {
    return ffi::detail::AnyUnsafe::MoveAnyToTVMFFIAny(
        Any(ffi::Error("ValueError", "Doubler keeps no remap", "")));
  }
  static constexpr ffi::StructuralMutatorVTable kVTable{&Mutate, &Mutate, &NoRemap, &RefuseRemap};
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test_cxx_structural.Doubler", DoublerObj,
                                    ffi::StructuralMutatorObj);
};

class SummerObj : public ffi::StructuralVisitorObj {
 public:
  int64_t sum = 0;
  SummerObj() : StructuralVisitorObj(&kVTable) {}
  static TVMFFIAny Visit(ffi::StructuralVisitorObj* self, AnyView value) noexcept {
    if (auto i = value.as<int64_t>()) {
      static_cast<SummerObj*>(self)->sum += *i;
      return ffi::detail::AnyUnsafe::MoveAnyToTVMFFIAny(Any(nullptr));
    }
    return ffi::detail::ExpectedUnsafe::MoveToTVMFFIAny(self->DefaultVisitExpected(value));
  }
  static constexpr ffi::StructuralVisitorVTable kVTable{&Visit};
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test_cxx_structural.Summer", SummerObj,
                                    ffi::StructuralVisitorObj);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<DoublerObj>().def_ro("rewrites", &DoublerObj::rewrites);
  refl::ObjectDef<SummerObj>().def_ro("sum", &SummerObj::sum);
}

static void Subclasses() {
  auto call = [](const char* label, const char* global, auto&&... args) {
    try {
      Any r = Function::GetGlobalRequired(global)(args...);
      std::printf("%s: %s\n", label, Show(r).c_str());
    } catch (const ffi::Error& e) {
      Report(label, e);
    }
  };
  auto doubler = ffi::make_object<DoublerObj>();
  auto summer = ffi::make_object<SummerObj>();
  ffi::StructuralMutator m(doubler);
  ffi::StructuralVisitor v(summer);
  std::printf("Doubler depth %d, parent %s\n", TVMFFIGetTypeInfo(doubler->type_index())->type_depth,
              std::string(ffi::TypeIndexToTypeKey(
                  TVMFFIGetTypeInfo(doubler->type_index())->type_ancestors[1]->type_index))
                  .c_str());
  Array<Any> root{1, Array<Any>{2, 3}, TNode(4, {5})};
  call("StructuralMutatorMutate(Doubler)", "ffi.StructuralMutatorMutate", m, root);
  call("StructuralMutatorDefaultMutate(Doubler)", "ffi.StructuralMutatorDefaultMutate", m, root);
  std::printf("rewrites: %lld\n", static_cast<long long>(doubler->rewrites));
  call("StructuralMutatorVarRemapGet(Doubler)", "ffi.StructuralMutatorVarRemapGet", m, root);
  call("StructuralMutatorVarRemapSet(Doubler)", "ffi.StructuralMutatorVarRemapSet", m, root, 1);
  call("StructuralMutatorDefRegionKind(Doubler)", "ffi.StructuralMutatorDefRegionKind", m);
  Function region = Function::FromTyped([&]() {
    return static_cast<int64_t>(doubler->def_region_kind());
  });
  call("StructuralMutatorWithDefRegionKind(Doubler, 2)", "ffi.StructuralMutatorWithDefRegionKind",
       m, 2, region);
  call("StructuralVisitorVisit(Summer)", "ffi.StructuralVisitorVisit", v, root);
  call("StructuralVisitorDefaultVisit(Summer)", "ffi.StructuralVisitorDefaultVisit", v, root);
  std::printf("sum: %lld\n", static_cast<long long>(summer->sum));
  call("StructuralVisitorDefRegionKind(Summer)", "ffi.StructuralVisitorDefRegionKind", v);
  // The library's own engines hand their mutator to callbacks; a callback
  // can recurse through the subclass instead.
  Function via_doubler = Function::FromTyped([&](AnyView value, ffi::StructuralMutator) {
    return m->DefaultMutateExpected(value, ffi::InplaceMode::kDisallow).value().ValueOrUnchanged(value);
  });
  call("StructuralMutate(Array -> Doubler default)", "ffi.StructuralMutate", root,
       Array<Any>{Array<Any>{static_cast<int64_t>(ffi::TypeIndex::kTVMFFIArray), via_doubler,
                             false}});
  // Where the other kind is expected, each is refused.
  call("StructuralMutatorMutate(Summer)", "ffi.StructuralMutatorMutate", v, root);
  call("StructuralVisitorVisit(Doubler)", "ffi.StructuralVisitorVisit", m, root);
}

int main() {
  Exported();
  HeaderEngines();
  LibraryEngines();
  Subclasses();
  std::printf("done\n");
  return 0;
}
