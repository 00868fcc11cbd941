// The C++ face of module objects: the exported ModuleObj methods, the
// module kind that forwards its virtual methods to a Rust ModuleKind, and
// the shims through which the Rust core calls the virtual methods of any
// module. No logic lives here: arguments are passed through, results are
// wrapped, and exceptions and raised errors are translated at each crossing.
#include "bridge.h"
#include "classes.h"
#include "guard.h"

namespace tvm {
namespace ffi {
namespace {

/// A module whose behaviour is a Rust ModuleKind.
class RustModuleObj final : public ModuleObj {
 public:
  /// Takes over `state` once constructed (the base may throw before).
  RustModuleObj(const TVMFFIRsKindOps* ops, void* state) : ops_(ops), state_(state) {
    header_.combined_ref_count = 1 | (uint64_t{1} << 32);
    header_.type_index = _GetOrAllocRuntimeTypeIndex();
    header_.__padding = 0;
    header_.deleter = Deleter;
  }
  ~RustModuleObj() { ops_->drop(state_); }

  const char* kind() const final { return ops_->kind(state_); }
  int GetPropertyMask() const final { return ops_->property_mask(state_); }
  Optional<Function> GetFunction(const String& name) final {
    TVMFFIObject* out = nullptr;
    detail::Check(ops_->get_function(state_, detail::ModuleHandle(this), name.raw(), &out));
    return Optional<Function>(out);
  }
  bool ImplementsFunction(const String& name) final {
    int32_t out = 0;
    detail::Check(ops_->implements_function(state_, detail::ModuleHandle(this), name.raw(), &out));
    return out != 0;
  }
  Optional<String> GetFunctionDoc(const String& name) final {
    Optional<String> out;
    detail::Check(ops_->function_info(state_, name.raw(), 1, out.raw()));
    return out;
  }
  Optional<String> GetFunctionMetadata(const String& name) final {
    Optional<String> out;
    detail::Check(ops_->function_info(state_, name.raw(), 0, out.raw()));
    return out;
  }
  void WriteToFile(const String& file_name, const String& format) const final {
    detail::Check(ops_->write_to_file(state_, file_name.raw(), format.raw()));
  }
  Array<String> GetWriteFormats() const final {
    TVMFFIObject* out = nullptr;
    detail::Check(ops_->write_formats(state_, &out));
    return Array<String>(out);
  }
  Bytes SaveToBytes() const final {
    Bytes out;
    detail::Check(ops_->save_to_bytes(state_, out.raw()));
    return out;
  }
  String InspectSource(const String& format) const final {
    String out;
    detail::Check(ops_->inspect_source(state_, format.raw(), out.raw()));
    return out;
  }

 private:
  /// The object deleter: contents on Strong, memory on Weak.
  static void Deleter(void* self, int flags) {
    auto* obj = static_cast<RustModuleObj*>(
        detail::ModuleFromHandle(static_cast<TVMFFIObject*>(self)));
    if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) obj->~RustModuleObj();
    if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) ::operator delete(static_cast<void*>(obj));
  }

  const TVMFFIRsKindOps* ops_;
  void* state_;
};

const TVMFFIRsCoreOps* core_ops = nullptr;

}  // namespace

namespace detail {
const TVMFFIRsCoreOps& Core() {
  if (core_ops == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", "the tvm-ffi-rs core is not installed");
    ThrowRaised();
  }
  return *core_ops;
}
}  // namespace detail

using detail::Check;
using detail::Core;

namespace {
/// A new empty Array (the built-in `ffi.Array` called with nothing).
TVMFFIObject* EmptyArray() {
  TVMFFIAny out{};
  Check(Core().call_builtin("ffi.Array", "tvm::ffi::ModuleObj::ModuleObj", nullptr, 0, &out));
  return out.v_obj;
}

/// Throws the RuntimeError the official defaults throw for an operation a
/// module kind does not support.
[[noreturn]] void ThrowUnsupported(const ModuleObj* module, const char* operation) {
  const char* parts[] = {"Module[", module->kind(), "] does not support ", operation};
  TVMFFIErrorSetRaisedFromCStrParts("RuntimeError", parts, 4);
  detail::ThrowRaised();
}
}  // namespace

ModuleObj::ModuleObj() : imports_(EmptyArray()) {}

int ModuleObj::GetPropertyMask() const { return 0; }

bool ModuleObj::ImplementsFunction(const String& name) {
  return GetFunction(name).get() != nullptr;
}

Optional<String> ModuleObj::GetFunctionDoc(const String&) { return Optional<String>(); }

Optional<String> ModuleObj::GetFunctionMetadata(const String&) { return Optional<String>(); }

void ModuleObj::WriteToFile(const String&, const String&) const {
  ThrowUnsupported(this, "WriteToFile");
}

Array<String> ModuleObj::GetWriteFormats() const { return Array<String>(EmptyArray()); }

Bytes ModuleObj::SaveToBytes() const { ThrowUnsupported(this, "SaveToBytes"); }

String ModuleObj::InspectSource(const String&) const { return String(); }

int32_t detail::RegisterModuleType() {
  static const char key[] = "ffi.Module";
  TVMFFIByteArray type_key{key, sizeof(key) - 1};
  return TVMFFITypeGetOrAllocIndex(&type_key, kTVMFFIModule, 1, 0, 1, kTVMFFIObject);
}

Optional<Function> ModuleObj::GetFunction(const String& name, bool query_imports) {
  TVMFFIObject* out = nullptr;
  Check(Core().get_function(detail::ModuleHandle(this), name.raw(), query_imports, &out));
  return Optional<Function>(out);
}

bool ModuleObj::ImplementsFunction(const String& name, bool query_imports) {
  int32_t out = 0;
  Check(Core().implements_function(detail::ModuleHandle(this), name.raw(), query_imports, &out));
  return out != 0;
}

Optional<String> ModuleObj::GetFunctionDoc(const String& name, bool query_imports) {
  Optional<String> out;
  Check(Core().function_info(detail::ModuleHandle(this), name.raw(), 1, query_imports, out.raw()));
  return out;
}

Optional<String> ModuleObj::GetFunctionMetadata(const String& name, bool query_imports) {
  Optional<String> out;
  Check(Core().function_info(detail::ModuleHandle(this), name.raw(), 0, query_imports, out.raw()));
  return out;
}

void ModuleObj::ImportModule(const Module& other) {
  Check(Core().import_module(detail::ModuleHandle(this), other.get()));
}

void ModuleObj::ClearImports() { Check(Core().clear_imports(detail::ModuleHandle(this))); }

struct ModuleObj::InternalUnsafe {
  /// The reference's backend of TVMFFIEnvModLookupFromImports. Inline with
  /// its static lock, as in the reference: the lock is an exported symbol.
  static void* GetFunctionFromImports(ModuleObj* module, const char* name) {
    static std::mutex mutex_;
    std::scoped_lock<std::mutex> lock(mutex_);
    TVMFFIObject* out = nullptr;
    Check(Core().lookup_from_imports(detail::ModuleHandle(module), name, &out));
    return out;
  }
};

Module Module::LoadFromFile(const String& file_name) {
  TVMFFIObject* out = nullptr;
  Check(Core().load_from_file(file_name.raw(), &out));
  return Module(out);
}

void Module::VisitContextSymbols(const TypedFunction<void(String, void*)>& callback) {
  Check(Core().visit_context_symbols(callback.packed().get()));
}

}  // namespace ffi
}  // namespace tvm

using tvm::ffi::ModuleObj;
using tvm::ffi::detail::Guard;

extern "C" {

void tvm_ffi_rs_install_core(const TVMFFIRsCoreOps* ops) { tvm::ffi::core_ops = ops; }

int tvm_ffi_rs_module_new(const TVMFFIRsKindOps* ops, void* state, TVMFFIObject** out) {
  void* memory = ::operator new(sizeof(tvm::ffi::RustModuleObj), std::nothrow);
  if (memory == nullptr) {
    ops->drop(state);
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory allocating a module");
    return -1;
  }
  int code = Guard([&] {
    *out = tvm::ffi::detail::ModuleHandle(new (memory) tvm::ffi::RustModuleObj(ops, state));
  });
  if (code != 0) {
    ::operator delete(memory);
    ops->drop(state);
  }
  return code;
}

int tvm_ffi_rs_module_kind(TVMFFIObject* mod, const char** out) {
  return Guard([&] { *out = tvm::ffi::detail::ModuleFromHandle(mod)->kind(); });
}

int tvm_ffi_rs_module_property_mask(TVMFFIObject* mod, int32_t* out) {
  return Guard([&] { *out = tvm::ffi::detail::ModuleFromHandle(mod)->GetPropertyMask(); });
}

int tvm_ffi_rs_module_get_function(TVMFFIObject* mod, const TVMFFIAny* name, TVMFFIObject** out) {
  return Guard([&] {
    *out = tvm::ffi::detail::ModuleFromHandle(mod)->GetFunction(tvm::ffi::detail::AsString(name)).release();
  });
}

int tvm_ffi_rs_module_implements_function(TVMFFIObject* mod, const TVMFFIAny* name,
                                          int32_t* out) {
  return Guard([&] {
    *out = tvm::ffi::detail::ModuleFromHandle(mod)->ImplementsFunction(tvm::ffi::detail::AsString(name));
  });
}

int tvm_ffi_rs_module_function_info(TVMFFIObject* mod, const TVMFFIAny* name, int32_t doc,
                                    TVMFFIAny* out) {
  return Guard([&] {
    ModuleObj* m = tvm::ffi::detail::ModuleFromHandle(mod);
    const tvm::ffi::String& s = tvm::ffi::detail::AsString(name);
    *out = (doc ? m->GetFunctionDoc(s) : m->GetFunctionMetadata(s)).release();
  });
}

int tvm_ffi_rs_module_write_to_file(TVMFFIObject* mod, const TVMFFIAny* path,
                                    const TVMFFIAny* format) {
  return Guard([&] {
    tvm::ffi::detail::ModuleFromHandle(mod)->WriteToFile(tvm::ffi::detail::AsString(path),
                                            tvm::ffi::detail::AsString(format));
  });
}

int tvm_ffi_rs_module_write_formats(TVMFFIObject* mod, TVMFFIObject** out) {
  return Guard([&] { *out = tvm::ffi::detail::ModuleFromHandle(mod)->GetWriteFormats().release(); });
}

int tvm_ffi_rs_module_save_to_bytes(TVMFFIObject* mod, TVMFFIAny* out) {
  return Guard([&] { *out = tvm::ffi::detail::ModuleFromHandle(mod)->SaveToBytes().release(); });
}

int tvm_ffi_rs_module_inspect_source(TVMFFIObject* mod, const TVMFFIAny* format, TVMFFIAny* out) {
  return Guard([&] {
    *out = tvm::ffi::detail::ModuleFromHandle(mod)->InspectSource(tvm::ffi::detail::AsString(format)).release();
  });
}

int tvm_ffi_rs_module_import_module(TVMFFIObject* mod, TVMFFIObject* other) {
  return Guard([&] {
    TVMFFIObjectIncRef(other);
    tvm::ffi::detail::ModuleFromHandle(mod)->ImportModule(tvm::ffi::Module(other));
  });
}

int tvm_ffi_rs_module_clear_imports(TVMFFIObject* mod) {
  return Guard([&] { tvm::ffi::detail::ModuleFromHandle(mod)->ClearImports(); });
}

int tvm_ffi_rs_module_lookup_from_imports(TVMFFIObject* mod, const char* name,
                                          TVMFFIObject** out) {
  return Guard([&] {
    *out = static_cast<TVMFFIObject*>(
        ModuleObj::InternalUnsafe::GetFunctionFromImports(tvm::ffi::detail::ModuleFromHandle(mod), name));
  });
}

}  // extern "C"
