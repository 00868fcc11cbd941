// C++ compiled with the official headers, using modules on whichever
// library it runs on (ours or the official one):
//   - a custom module kind from a C++ library (plugin/custom_module.cc),
//     made by one of its functions and by its `load_from_bytes` loader while
//     the library's embedded tree is loaded; used from C++ (virtual calls,
//     imports_) and through the library's `ffi.Module*` globals;
//   - a module the library itself made (Module::LoadFromFile of a C plugin):
//     virtual calls, imports_, VisitContextSymbols;
//   - virtual methods that throw tvm::ffi::Error and std::exception;
//   - the exported free functions of the reflection family that exist on
//     both libraries.
// The transcript must not depend on the library.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <initializer_list>
#include <string>
#include <vector>

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Bytes;
using tvm::ffi::Error;
using tvm::ffi::Function;
using tvm::ffi::Module;
using tvm::ffi::ModuleObj;
using tvm::ffi::Optional;
using tvm::ffi::String;

namespace {

std::string Show(const Optional<String>& s) {
  return s.has_value() ? "'" + std::string(*s) + "'" : "None";
}

std::string Show(const Any& v) {
  if (v == nullptr) return "None";
  if (auto b = v.try_cast<bool>(); b && v.type_index() == tvm::ffi::TypeIndex::kTVMFFIBool) {
    return *b ? "True" : "False";
  }
  if (auto i = v.try_cast<int64_t>()) return std::to_string(*i);
  if (auto s = v.try_cast<String>()) return "'" + std::string(*s) + "'";
  if (auto m = v.try_cast<Module>()) return std::string("<module ") + (*m)->kind() + ">";
  return "<type " + std::to_string(v.type_index()) + ">";
}

/// Runs `body`, printing the kind and message of what it throws.
void Expect(const char* what, const std::function<std::string()>& body) {
  try {
    std::printf("%s: %s\n", what, body().c_str());
  } catch (const Error& err) {
    std::printf("%s: raised %s: %s (what: %s)\n", what, err.kind().c_str(),
                err.message().c_str(), err.what());
  } catch (const std::exception& err) {
    std::printf("%s: raised a non-FFI exception: %s\n", what, err.what());
  }
}

/// Calls `f` through the C API, printing a raised error's kind and message.
std::string CallC(const Function& f, std::initializer_list<Any> args) {
  std::vector<TVMFFIAny> raw;
  for (const Any& a : args) raw.push_back(tvm::ffi::AnyView(a).CopyToTVMFFIAny());
  TVMFFIAny result{};
  if (TVMFFIFunctionCall(const_cast<tvm::ffi::FunctionObj*>(f.get()), raw.data(), static_cast<int32_t>(raw.size()), &result) != 0) {
    TVMFFIObjectHandle err = nullptr;
    TVMFFIErrorMoveFromRaised(&err);
    const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    std::string out = "raised " + std::string(cell->kind.data, cell->kind.size) + ": " +
                      std::string(cell->message.data, cell->message.size);
    TVMFFIObjectDecRef(err);
    return out;
  }
  return Show(tvm::ffi::detail::AnyUnsafe::MoveTVMFFIAnyToAny(&result));
}

std::string Imports(const Module& m) {
  std::string out = std::to_string(m->imports().size()) + " [";
  for (const Any& import : m->imports()) out += " " + Show(import);
  return out + " ]";
}

/// The virtual methods of a module, called from C++.
void Describe(const char* label, const Module& m, const char* fn) {
  std::printf("== %s\n", label);
  std::printf("kind %s, property mask %d, imports %s\n", m->kind(), m->GetPropertyMask(),
              Imports(m).c_str());
  std::printf("implements %s: %d, own function: %d\n", fn, m->ImplementsFunction(String(fn)),
              m->GetFunction(String(fn)).has_value());
  std::printf("doc %s, metadata %s\n", Show(m->GetFunctionDoc(String(fn))).c_str(),
              Show(m->GetFunctionMetadata(String(fn))).c_str());
  std::printf("write formats:");
  for (const String& f : m->GetWriteFormats()) std::printf(" %s", f.c_str());
  std::printf("\n");
}

void CustomModule(const Module& lib) {
  Describe("the custom library, loaded", lib, "make_counter");
  Function make = lib->GetFunction(String("make_counter"), false).value();
  Module counter = make(int64_t{10}).cast<Module>();
  Describe("a counter made by make_counter", counter, "get");
  Function add = counter->GetFunction(String("add")).value();
  std::printf("add(5) -> %s, get() -> %s\n", Show(add(5)).c_str(),
              Show(counter->GetFunction(String("get")).value()()).c_str());
  std::printf("save to bytes: %s\n", std::string(counter->SaveToBytes()).c_str());
  std::printf("inspect source: %s\n", counter->InspectSource(String("c")).c_str());
  std::printf("metadata of add: %s\n", Show(counter->GetFunctionMetadata(String("add"))).c_str());

  // The library's embedded tree: the library module imports a counter
  // made by the `load_from_bytes` loader.
  const Any& loaded = lib->imports()[0];
  Module from_bytes = loaded.cast<Module>();
  Describe("the counter loaded from the embedded tree", from_bytes, "get");
  Function lookup = lib->GetFunction(String("lookup_get"), false).value();
  std::printf("lookup_get (TVMFFIEnvModLookupFromImports) -> %s, twice -> %s\n",
              Show(lookup()).c_str(), Show(lookup()).c_str());
  std::printf("lib->GetFunction(get, imports) found: %d, without: %d\n",
              lib->GetFunction(String("get"), true).has_value(),
              lib->GetFunction(String("get"), false).has_value());
  std::printf("doc through imports: %s\n", Show(lib->GetFunctionDoc(String("get"), true)).c_str());

  // Through the library's globals, as C and Python reach modules.
  Function get_fn = Function::GetGlobalRequired("ffi.ModuleGetFunction");
  Function get_kind = Function::GetGlobalRequired("ffi.ModuleGetKind");
  Function get_doc = Function::GetGlobalRequired("ffi.ModuleGetFunctionDoc");
  Function get_meta = Function::GetGlobalRequired("ffi.ModuleGetFunctionMetadata");
  Function implements = Function::GetGlobalRequired("ffi.ModuleImplementsFunction");
  Function mask = Function::GetGlobalRequired("ffi.ModuleGetPropertyMask");
  Function inspect = Function::GetGlobalRequired("ffi.ModuleInspectSource");
  Function import = Function::GetGlobalRequired("ffi.ModuleImportModule");
  Function clear = Function::GetGlobalRequired("ffi.ModuleClearImports");
  Function write = Function::GetGlobalRequired("ffi.ModuleWriteToFile");
  std::printf("== the counter through the globals\n");
  std::printf("kind %s, mask %s, inspect %s\n", Show(get_kind(counter)).c_str(),
              Show(mask(counter)).c_str(), Show(inspect(counter, String("s"))).c_str());
  Function got = get_fn(counter, String("get"), false).cast<Function>();
  std::printf("get() -> %s; missing -> %s\n", Show(got()).c_str(),
              Show(get_fn(counter, String("missing"), false)).c_str());
  std::printf("doc %s, metadata %s, implements add %s, implements x %s\n",
              Show(get_doc(counter, String("get"), false)).c_str(),
              Show(get_meta(counter, String("add"), false)).c_str(),
              Show(implements(counter, String("add"), false)).c_str(),
              Show(implements(counter, String("x"), false)).c_str());
  std::string path = "cxx_module_counter.txt";
  write(counter, String(path), String("counter"));
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::remove(path.c_str());
  std::printf("written: %s", text.str().c_str());
  Expect("write in another format", [&] {
    write(counter, String(path), String("json"));
    return std::string("written");
  });

  std::printf("== imports between modules of both origins\n");
  Module other = make(int64_t{100}).cast<Module>();
  import(counter, other);
  std::printf("counter imports %s\n", Imports(counter).c_str());
  counter->ImportModule(lib);
  std::printf("counter imports %s\n", Imports(counter).c_str());
  std::printf("found through imports: %s\n",
              Show(get_fn(counter, String("make_counter"), true)).c_str());
  Expect("cyclic import (C++ virtual)", [&] {
    lib->ImportModule(counter);
    return std::string("imported");
  });
  Expect("cyclic import (global)", [&] {
    import(lib, counter);
    return std::string("imported");
  });
  clear(counter);
  std::printf("after ClearImports: %s\n", Imports(counter).c_str());

  std::printf("== errors thrown by virtual methods\n");
  Expect("GetFunction throws tvm::ffi::Error (global)",
         [&] { return Show(get_fn(counter, String("boom"), false)); });
  // Through the C API, as C and Python call: a std::exception becomes an
  // InternalError. (A C++ caller of the official library's globals sees the
  // std::exception itself; ours are not C++ functions.)
  Expect("GetFunction throws std::runtime_error (C API)",
         [&] { return CallC(get_fn, {counter, String("std_boom"), false}); });
  Expect("GetFunctionDoc throws std::out_of_range (C API)",
         [&] { return CallC(get_doc, {counter, String("std_boom"), false}); });
  Expect("GetFunction throws, through an importer (C++)", [&] {
    lib->ImportModule(counter);
    return std::to_string(lib->GetFunction(String("boom"), true).has_value());
  });
  Expect("a counter function that throws", [&] {
    return Show(counter->GetFunction(String("fail")).value()());
  });
}

void LibraryModule(const char* path) {
  Module m = Module::LoadFromFile(String(path));
  Describe("a library module made by the runtime", m, "add");
  Function f = m->GetFunction(String("add"), false).value();
  std::printf("add(40, 2) -> %s\n", Show(f(40, 2)).c_str());
  Function context_value = m->GetFunction(String("context_value"), false).value();
  std::printf("context_value() -> %s\n", Show(context_value()).c_str());
  std::printf("missing function: %d\n", m->GetFunction(String("missing"), true).has_value());
  Expect("SaveToBytes of a library module", [&] {
    return std::to_string(m->SaveToBytes().size()) + " bytes";
  });
  Expect("WriteToFile of a library module", [&] {
    m->WriteToFile(String("x.json"), String("json"));
    return std::string("written");
  });
  Expect("LoadFromFile of a file without extension",
         [&] { return std::string(Module::LoadFromFile(String("no_extension"))->kind()); });
  Expect("LoadFromFile of an unknown format",
         [&] { return std::string(Module::LoadFromFile(String("x.unknownfmt"))->kind()); });

  std::printf("context symbols:");
  Module::VisitContextSymbols([](String name, void* value) {
    std::printf(" %s=%p", name.c_str(), value);
  });
  std::printf("\n");
}

void FreeFunctions() {
  std::printf("== reflection free functions\n");
  Function make_array = Function::GetGlobalRequired("ffi.Array");
  Any array = make_array(1, String("two"), 3.5);
  Any copy = tvm::ffi::DeepCopy(array);
  std::printf("ReprPrint %s, copy equal %d, copy lt %d, le %d, gt %d, ge %d, hashes equal %d\n",
              tvm::ffi::ReprPrint(array).c_str(), tvm::ffi::RecursiveEq(array, copy),
              tvm::ffi::RecursiveLt(array, copy), tvm::ffi::RecursiveLe(array, copy),
              tvm::ffi::RecursiveGt(array, copy), tvm::ffi::RecursiveGe(array, copy),
              tvm::ffi::RecursiveHash(array) == tvm::ffi::RecursiveHash(copy));
  Any parsed = tvm::ffi::json::Parse(String("{\"a\": [1, 2.5, null, true]}"));
  std::printf("json round trip: %s\n", tvm::ffi::json::Stringify(parsed).c_str());
  std::printf("json indented: %s\n", tvm::ffi::json::Stringify(parsed, 2).c_str());
  String error_msg("unset");
  Any bad = tvm::ffi::json::Parse(String("[1, 2"), &error_msg);
  std::printf("json error slot: %s, value %s\n", error_msg.c_str(), Show(bad).c_str());
  Expect("json error thrown", [] { return Show(tvm::ffi::json::Parse(String("{x"))); });
  Any graph = tvm::ffi::ToJSONGraph(array);
  std::printf("graph %s\n", tvm::ffi::json::Stringify(graph).c_str());
  std::printf("back: %s\n", tvm::ffi::ReprPrint(tvm::ffi::FromJSONGraph(graph)).c_str());
}

}  // namespace

int main() {
  TVMFFIEnvModRegisterContextSymbol("cxx_test_context", reinterpret_cast<void*>(0x5678));
  try {
    CustomModule(Module::LoadFromFile(String(CUSTOM_MODULE)));
    LibraryModule(PLUGIN_PLAIN);
    FreeFunctions();
  } catch (const Error& err) {
    std::printf("unexpected %s\n", err.FullMessage().c_str());
    return 1;
  }
  return 0;
}
