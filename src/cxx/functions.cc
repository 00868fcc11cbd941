// The exported C++ free functions of the reflection family (recursive
// comparison, copy, repr, JSON, structural equality and hashing). Each is,
// in the reference too, the body of a built-in global with the same
// arguments: it packs them, calls that global's built-in implementation and
// unpacks the result; failures are thrown as tvm::ffi::Error.
#include "bridge.h"
#include "classes.h"
#include "guard.h"

namespace tvm {
namespace ffi {
namespace {

TVMFFIAny BoolArg(bool value) {
  TVMFFIAny out{};
  out.type_index = kTVMFFIBool;
  out.v_int64 = value;
  return out;
}

/// Calls built-in `name` on behalf of `cxx_name`; the result is owned.
Any Run(const char* name, const char* cxx_name, std::initializer_list<TVMFFIAny> args) {
  Any out;
  detail::Check(detail::Core().call_builtin(name, cxx_name, args.begin(),
                                            static_cast<int32_t>(args.size()), out.raw()));
  return out;
}

/// The object reference an owned result holds (empty for None).
template <typename Ref>
Ref ObjectOf(Any result) {
  TVMFFIAny value = result.release();
  return Ref(value.type_index >= kTVMFFIStaticObjectBegin ? value.v_obj : nullptr);
}

/// The algorithms answer bool and int results as such.
int64_t IntOf(const Any& value) { return value.raw()->v_int64; }

}  // namespace

bool RecursiveEq(const Any& lhs, const Any& rhs) {
  return IntOf(Run("ffi.RecursiveEq", "tvm::ffi::RecursiveEq", {*lhs.raw(), *rhs.raw()})) != 0;
}
bool RecursiveLt(const Any& lhs, const Any& rhs) {
  return IntOf(Run("ffi.RecursiveLt", "tvm::ffi::RecursiveLt", {*lhs.raw(), *rhs.raw()})) != 0;
}
bool RecursiveLe(const Any& lhs, const Any& rhs) {
  return IntOf(Run("ffi.RecursiveLe", "tvm::ffi::RecursiveLe", {*lhs.raw(), *rhs.raw()})) != 0;
}
bool RecursiveGt(const Any& lhs, const Any& rhs) {
  return IntOf(Run("ffi.RecursiveGt", "tvm::ffi::RecursiveGt", {*lhs.raw(), *rhs.raw()})) != 0;
}
bool RecursiveGe(const Any& lhs, const Any& rhs) {
  return IntOf(Run("ffi.RecursiveGe", "tvm::ffi::RecursiveGe", {*lhs.raw(), *rhs.raw()})) != 0;
}
int64_t RecursiveHash(const Any& value) {
  return IntOf(Run("ffi.RecursiveHash", "tvm::ffi::RecursiveHash", {*value.raw()}));
}
Any DeepCopy(const Any& value) { return Run("ffi.DeepCopy", "tvm::ffi::DeepCopy", {*value.raw()}); }
String ReprPrint(const Any& value) {
  return String(Run("ffi.ReprPrint", "tvm::ffi::ReprPrint", {*value.raw()}).release());
}
Any ToJSONGraph(const Any& value, const Any& metadata) {
  return Run("ffi.ToJSONGraph", "tvm::ffi::ToJSONGraph", {*value.raw(), *metadata.raw()});
}
Any FromJSONGraph(const Any& value) { return Run("ffi.FromJSONGraph", "tvm::ffi::FromJSONGraph", {*value.raw()}); }

namespace json {
Any Parse(const String& json_str, String* error_msg) {
  Any out;
  TVMFFIAny arg = *json_str.raw();
  if (detail::Core().call_builtin("ffi.json.Parse", "tvm::ffi::json::Parse", &arg, 1, out.raw()) ==
      0) {
    if (error_msg != nullptr) *error_msg = String();
    return out;
  }
  if (error_msg == nullptr) detail::ThrowRaised();
  // With an error slot the reference reports the message there and
  // answers None instead of throwing.
  TVMFFIObjectHandle raised = nullptr;
  TVMFFIErrorMoveFromRaised(&raised);
  Error err = detail::ErrorFromOwned(static_cast<TVMFFIObject*>(raised));
  const TVMFFIByteArray& message = TVMFFIErrorGetCellPtr(detail::ErrorHandle(err))->message;
  TVMFFIAny text{};
  detail::Check(TVMFFIStringFromByteArray(&message, &text));
  *error_msg = String(text);
  return Any();
}

String Stringify(const Any& value, const Optional<int>& indent) {
  return String(Run("ffi.json.Stringify", "tvm::ffi::json::Stringify", {*value.raw(), *indent.raw()}).release());
}
}  // namespace json

bool StructuralEqual::Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                            bool skip_tensor_content) {
  return IntOf(Run("ffi.StructuralEqual", "tvm::ffi::StructuralEqual::Equal", {*lhs.raw(), *rhs.raw(), BoolArg(map_free_vars),
                                              BoolArg(skip_tensor_content)})) != 0;
}

Optional<Tuple<reflection::AccessPath, reflection::AccessPath>> StructuralEqual::GetFirstMismatch(
    const Any& lhs, const Any& rhs, bool map_free_vars, bool skip_tensor_content) {
  return ObjectOf<Optional<Tuple<reflection::AccessPath, reflection::AccessPath>>>(
      Run("ffi.GetFirstStructuralMismatch", "tvm::ffi::StructuralEqual::GetFirstMismatch",
          {*lhs.raw(), *rhs.raw(), BoolArg(map_free_vars), BoolArg(skip_tensor_content)}));
}

uint64_t StructuralHash::Hash(const Any& value, bool map_free_vars, bool skip_tensor_content) {
  return static_cast<uint64_t>(IntOf(Run("ffi.StructuralHash", "tvm::ffi::StructuralHash::Hash", {*value.raw(), BoolArg(map_free_vars), BoolArg(skip_tensor_content)})));
}

Array<reflection::AccessPath> VisitErrorContext::FindAccessPaths(const ObjectRef& root,
                                                                const VisitErrorContext& ctx,
                                                                bool include_self) {
  TVMFFIAny root_arg{};
  root_arg.type_index = root.get() != nullptr ? root.get()->type_index : kTVMFFINone;
  root_arg.v_obj = root.get();
  TVMFFIAny ctx_arg{};
  ctx_arg.type_index = ctx.get() != nullptr ? ctx.get()->type_index : kTVMFFINone;
  ctx_arg.v_obj = ctx.get();
  return ObjectOf<Array<reflection::AccessPath>>(
      Run("ffi.VisitErrorContext.FindAccessPaths", "tvm::ffi::VisitErrorContext::FindAccessPaths",
          {root_arg, ctx_arg, BoolArg(include_self)}));
}

}  // namespace ffi
}  // namespace tvm
