// What C++ code compiled with the official headers sees on our library
// where the official one has no clean answer or a feature of a later issue:
//   - a virtual method throwing something that is not a std::exception
//     becomes an InternalError (the official library lets it escape through
//     its C frames);
//   - ToJSONGraph of a reflected object whose DataType field has no text
//     that reads back as itself (zero lanes, a zero-bit float) is refused,
//     naming the field and type (the official library writes a graph that
//     reads back as a different object); a field without a JSON form names
//     itself too.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

using tvm::ffi::Any;
using tvm::ffi::Error;
using tvm::ffi::Function;
using tvm::ffi::Module;
using tvm::ffi::String;

/*! An IR integer immediate: a DataType field stored as a raw DLDataType. */
class ImmObj : public tvm::ffi::Object {
 public:
  DLDataType dtype{kDLInt, 32, 1};
  DLDevice device{kDLCUDA, 1};
  int64_t value = 5;
  static constexpr bool _type_mutable = true;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test_cxx_ours.Imm", ImmObj, tvm::ffi::Object);
};

/*! A type with a field that has no JSON form. */
class HandleObj : public tvm::ffi::Object {
 public:
  void* ptr = nullptr;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test_cxx_ours.Handle", HandleObj, tvm::ffi::Object);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<ImmObj>()
      .def_rw("dtype", &ImmObj::dtype)
      .def_rw("device", &ImmObj::device)
      .def_rw("value", &ImmObj::value);
  refl::ObjectDef<HandleObj>().def_ro("ptr", &HandleObj::ptr);
}

namespace {
int failures = 0;

void ExpectRaise(const char* what, const char* kind, const char* needle,
                 const std::function<void()>& body) {
  try {
    body();
    std::printf("FAILED %s: nothing raised\n", what);
    ++failures;
  } catch (const Error& err) {
    bool ok = err.kind() == kind && err.message().find(needle) != std::string::npos;
    std::printf("%s %s: %s: %s\n", ok ? "ok" : "FAILED", what, err.kind().c_str(),
                err.message().c_str());
    failures += !ok;
  }
}
}  // namespace

int main() {
  Module lib = Module::LoadFromFile(String(CUSTOM_MODULE));
  Module counter = lib->GetFunction(String("make_counter"), false).value()(1).cast<Module>();
  Function get_fn = Function::GetGlobalRequired("ffi.ModuleGetFunction");
  ExpectRaise("a virtual method throwing an int", "InternalError", "not a std::exception",
              [&] { get_fn(counter, String("int_boom"), false); });
  ExpectRaise("... through ModuleObj::GetFunction(name, query_imports)", "InternalError",
              "not a std::exception", [&] { lib->GetFunction(String("int_boom"), true); });
  auto imm = [](DLDataType dtype) {
    auto n = tvm::ffi::make_object<ImmObj>();
    n->dtype = dtype;
    return tvm::ffi::ObjectRef(n);
  };
  ExpectRaise("ToJSONGraph of a zero-lane DataType field", "ValueError",
              "(`int32` does not) (field `dtype` of `test_cxx_ours.Imm`)",
              [&] { tvm::ffi::ToJSONGraph(imm(DLDataType{kDLInt, 32, 0})); });
  ExpectRaise("ToJSONGraph of a zero-bit float field", "ValueError",
              "(`float0` does not) (field `dtype` of `test_cxx_ours.Imm`)",
              [&] { tvm::ffi::ToJSONGraph(imm(DLDataType{kDLFloat, 0, 1})); });
  ExpectRaise("ToJSONGraph of an unknown type code field", "ValueError",
              "unknown type_code=99 (field `dtype` of `test_cxx_ours.Imm`)",
              [&] { tvm::ffi::ToJSONGraph(imm(DLDataType{99, 7, 3})); });
  ExpectRaise("ToJSONGraph of a void* field", "RuntimeError",
              "Cannot serialize type `void*` (field `ptr` of `test_cxx_ours.Handle`)", [&] {
                tvm::ffi::ToJSONGraph(tvm::ffi::ObjectRef(tvm::ffi::make_object<HandleObj>()));
              });
  return failures == 0 ? 0 : 1;
}
