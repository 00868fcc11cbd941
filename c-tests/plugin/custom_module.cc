// A custom module kind written in C++ against the official headers: the
// "custom module" of the compiler-integration guide. `CounterModuleObj`
// subclasses tvm::ffi::ModuleObj with its own functions, docs, metadata,
// serialization and file writer. The library:
//   - exports `__tvm_ffi_make_counter(start)`, which makes such a module;
//   - registers `ffi.Module.load_from_bytes.counter`, its loader;
//   - embeds a `__tvm_ffi__library_bin` whose tree is [_lib, counter(41)],
//     the library module importing a counter module;
//   - exports `__tvm_ffi_lookup_get`, which finds "get" through
//     TVMFFIEnvModLookupFromImports and its `__tvm_ffi__library_ctx`.
// test_cxx_module.cc loads it on whichever runtime it runs on.
#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Bytes;
using tvm::ffi::Function;
using tvm::ffi::Module;
using tvm::ffi::ModuleObj;
using tvm::ffi::Optional;
using tvm::ffi::String;

class CounterModuleObj final : public ModuleObj {
 public:
  explicit CounterModuleObj(int64_t start) : value_(start) {}

  const char* kind() const final { return "counter"; }
  int GetPropertyMask() const final { return Module::kBinarySerializable | Module::kRunnable; }

  Optional<Function> GetFunction(const String& name) final {
    // Functions hold the module: they must not outlive its code.
    Module self = tvm::ffi::GetRef<Module>(this);
    if (name == "get") {
      return Function::FromTyped([self, this]() { return value_; });
    }
    if (name == "add") {
      return Function::FromTyped([self, this](int64_t delta) { return value_ += delta; });
    }
    if (name == "fail") {
      return Function::FromTyped([]() -> int64_t {
        TVM_FFI_THROW(ValueError) << "counter function failed on purpose";
      });
    }
    if (name == "boom") {
      // A virtual method that throws tvm::ffi::Error.
      TVM_FFI_THROW(IndexError) << "no function may be called boom";
    }
    if (name == "std_boom") {
      // ... and one that throws a std::exception.
      throw std::runtime_error("std::runtime_error from GetFunction");
    }
    if (name == "int_boom") {
      // ... and one that throws something else (only our library catches
      // that: test_cxx_ours.cc).
      throw 42;
    }
    return std::nullopt;
  }

  Optional<String> GetFunctionDoc(const String& name) final {
    if (name == "get") return String("Returns the counter value.");
    if (name == "std_boom") throw std::out_of_range("doc lookup out of range");
    return std::nullopt;
  }

  Optional<String> GetFunctionMetadata(const String& name) final {
    if (name == "add") return String(R"({"type_schema":"(int) -> int"})");
    return std::nullopt;
  }

  void WriteToFile(const String& file_name, const String& format) const final {
    if (format != "counter") {
      TVM_FFI_THROW(ValueError) << "counter modules write format `counter`, not `" << format
                                << "`";
    }
    std::ofstream(std::string(file_name)) << "counter " << value_ << "\n";
  }

  Array<String> GetWriteFormats() const final { return Array<String>({"counter"}); }

  Bytes SaveToBytes() const final { return Bytes(std::to_string(value_)); }

  String InspectSource(const String& format) const final {
    return String("counter at " + std::to_string(value_) + " (" + std::string(format) + ")");
  }

 private:
  int64_t value_;
};

Module MakeCounter(int64_t start) { return Module(tvm::ffi::make_object<CounterModuleObj>(start)); }

Module LoadCounter(const Bytes& bytes) { return MakeCounter(std::stoll(std::string(bytes))); }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_counter, MakeCounter);

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("ffi.Module.load_from_bytes.counter", LoadCounter);
}

extern "C" {
// Set by the loader to this library's module (its ModuleObj*).
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = nullptr;

// The module tree: [_lib, counter("41")], module 0 importing module 1.
#define U64(x)                                                                              \
  (unsigned char)((x) & 0xff), 0, 0, 0, 0, 0, 0, 0
extern TVM_FFI_DLL_EXPORT const unsigned char __tvm_ffi__library_bin[];
const unsigned char __tvm_ffi__library_bin[] = {
    U64(85),                                   // bytes after this size
    U64(3), U64(0), U64(1), U64(1),            // CSR row pointers
    U64(1), U64(1),                            // CSR children
    U64(4), '_', 'l', 'i', 'b',                // module 0: the library
    U64(7), 'c', 'o', 'u', 'n', 't', 'e', 'r', // module 1: a counter
    U64(2), '4', '1',                          // ... its bytes
};
#undef U64
}

namespace {
int64_t LookupGet() {
  TVMFFIObjectHandle get = nullptr;
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, "get", &get));
  // Borrowed: the library module's lookup cache keeps it alive.
  TVMFFIAny result{};
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIFunctionCall(get, nullptr, 0, &result));
  return result.v_int64;
}
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(lookup_get, LookupGet);
