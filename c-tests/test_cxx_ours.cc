// What C++ code compiled with the official headers sees on our library
// where the official one has no clean answer or a feature of a later issue:
//   - a virtual method throwing something that is not a std::exception
//     becomes an InternalError (the official library lets it escape through
//     its C frames);
//   - the structural free functions run the real algorithms (the official
//     library gives the same answers; a differential C++ test of the whole
//     family comes with the rest of it).
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/function.h>
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
  // The structural family's C++ entry points run the real algorithms.
  Any a(1), b(1), c(2);
  auto expect = [&](const char* what, bool ok) {
    std::printf("%s %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
  };
  expect("StructuralEqual::Equal(1, 1)", tvm::ffi::StructuralEqual::Equal(a, b));
  expect("StructuralEqual::Equal(1, 2) is false", !tvm::ffi::StructuralEqual::Equal(a, c));
  expect("StructuralEqual::GetFirstMismatch(1, 1) is null",
         !tvm::ffi::StructuralEqual::GetFirstMismatch(a, b).has_value());
  expect("StructuralEqual::GetFirstMismatch(1, 2) is a path pair",
         tvm::ffi::StructuralEqual::GetFirstMismatch(a, c).has_value());
  expect("StructuralHash::Hash agrees with Equal",
         tvm::ffi::StructuralHash::Hash(a) == tvm::ffi::StructuralHash::Hash(b));
  return failures == 0 ? 0 : 1;
}
