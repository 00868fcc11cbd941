// A C++ program in MSVC's ABI (clang in MSVC mode, as build.rs builds the
// C++ layer) that uses tvm_ffi.dll's C++ symbols as MSVC-compiled code
// does, with this library's own declarations of the classes
// (src/cxx/classes.h, imported instead of exported): it catches the
// exceptions the DLL throws (by their class, by std::exception, by `...`),
// and subclasses ModuleObj, whose module the runtime then drives through
// MSVC's vftable, its own overrides and the DLL's defaults, an override
// throwing across the DLL. The same program runs on the official DLL and
// on ours (tests/platforms/windows/run.sh); the transcripts must match.
#include "classes.h"

extern "C" int printf(const char*, ...);

using namespace tvm::ffi;

namespace {

String Str(const char* text) {
  TVMFFIByteArray bytes{text, __builtin_strlen(text)};
  TVMFFIAny out{};
  TVMFFIStringFromByteArray(&bytes, &out);
  return String(out);
}

std::string Text(const TVMFFIAny& value) {
  if (value.type_index == kTVMFFISmallStr) {
    return std::string(value.v_bytes, value.small_str_len);
  }
  if (value.type_index == kTVMFFIStr) {
    const TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(value.v_obj);
    return std::string(bytes->data, bytes->size);
  }
  return std::string("<not a str>", 11);
}

/// Calls global `name`; prints the result (its type, a str, an int) or
/// the error raised.
void Call(const char* label, const char* name, TVMFFIAny* args, int n) {
  TVMFFIByteArray key{name, __builtin_strlen(name)};
  TVMFFIObjectHandle f = nullptr;
  TVMFFIFunctionGetGlobal(&key, &f);
  TVMFFIAny out{};
  if (TVMFFIFunctionCall(f, args, n, &out) != 0) {
    TVMFFIObjectHandle err = nullptr;
    TVMFFIErrorMoveFromRaised(&err);
    const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    printf("%s: raises %.*s: %.*s\n", label, (int)cell->kind.size, cell->kind.data,
           (int)cell->message.size, cell->message.data);
    TVMFFIObjectDecRef(err);
  } else if (out.type_index == kTVMFFISmallStr || out.type_index == kTVMFFIStr) {
    std::string text = Text(out);
    printf("%s: str \"%s\"\n", label, text.data());
  } else if (out.type_index < kTVMFFIStaticObjectBegin) {
    printf("%s: type %d value %lld\n", label, out.type_index, (long long)out.v_int64);
  } else {
    printf("%s: an object of type %d\n", label, out.type_index);
  }
  if (out.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(out.v_obj);
  TVMFFIObjectDecRef(f);
}

int AddOne(void*, const TVMFFIAny* args, int32_t, TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}

/// A module kind built in MSVC's ABI against the DLL's ModuleObj.
class MsvcModule final : public ModuleObj {
 public:
  const char* kind() const override { return "msvc_host"; }
  Optional<Function> GetFunction(const String& name) override {
    std::string text = Text(*name.raw());
    if (__builtin_strcmp(text.data(), "add_one") == 0) {
      TVMFFIObjectHandle f = nullptr;
      TVMFFIFunctionCreate(nullptr, AddOne, nullptr, &f);
      return Optional<Function>(static_cast<TVMFFIObject*>(f));
    }
    if (__builtin_strcmp(text.data(), "boom") == 0) {
      throw Error(std::string("ValueError", 10), std::string("thrown by the MSVC module", 25),
                  std::string("", 0));
    }
    return Optional<Function>();
  }
};

void DeleteMsvcModule(void* self, int flags) {
  auto* module = static_cast<MsvcModule*>(detail::ModuleFromHandle(static_cast<TVMFFIObject*>(self)));
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) module->~MsvcModule();
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) ::operator delete(static_cast<void*>(module));
}

}  // namespace

int main() {
  // Exceptions thrown by the DLL's C++ functions.
  try {
    Module m = Module::LoadFromFile(Str("no-such-library.dll"));
    printf("Module::LoadFromFile: loaded\n");
  } catch (const Error& e) {
    std::string kind = e.kind(), message = e.message();
    printf("Module::LoadFromFile threw Error: %s: %s\n", kind.data(), message.data());
  }
  try {
    Any v = json::Parse(Str("[1, 2"), nullptr);
    printf("json::Parse: parsed\n");
  } catch (const std::exception& e) {
    printf("json::Parse threw, caught as std::exception: %s\n", e.what());
  }
  try {
    Any v = json::Parse(Str("{"), nullptr);
    printf("json::Parse: parsed\n");
  } catch (...) {
    printf("json::Parse threw, caught by catch (...)\n");
  }

  // A module of an MSVC-built kind, driven by the runtime.
  void* memory = ::operator new(sizeof(MsvcModule), std::nothrow);
  MsvcModule* module = new (memory) MsvcModule();
  TVMFFIObject* handle = detail::ModuleHandle(module);
  handle->combined_ref_count = 1;
  handle->type_index = ModuleObj::_GetOrAllocRuntimeTypeIndex();
  handle->deleter = DeleteMsvcModule;
  TVMFFIAny args[3]{};
  args[0].type_index = handle->type_index;
  args[0].v_obj = handle;
  Call("ffi.ModuleGetKind", "ffi.ModuleGetKind", args, 1);
  Call("ffi.ModuleGetPropertyMask (the default)", "ffi.ModuleGetPropertyMask", args, 1);
  static const char* const kNames[] = {"add_one", "missing", "boom"};
  for (const char* name : kNames) {
    String s = Str(name);
    args[1] = *s.raw();
    args[2].type_index = kTVMFFIBool;
    args[2].v_int64 = 0;
    char label[80];
    __builtin_snprintf(label, sizeof(label), "ffi.ModuleGetFunction(%s)", name);
    Call(label, "ffi.ModuleGetFunction", args, 3);
    __builtin_snprintf(label, sizeof(label), "ffi.ModuleImplementsFunction(%s) (the default)", name);
    Call(label, "ffi.ModuleImplementsFunction", args, 3);
    __builtin_snprintf(label, sizeof(label), "ffi.ModuleGetFunctionDoc(%s) (the default)", name);
    Call(label, "ffi.ModuleGetFunctionDoc", args, 3);
  }
  String path = Str("out.bin"), format = Str("bin");
  args[1] = *path.raw();
  args[2] = *format.raw();
  Call("ffi.ModuleWriteToFile (the default)", "ffi.ModuleWriteToFile", args, 3);
  Call("ffi.ModuleGetWriteFormats (the default)", "ffi.ModuleGetWriteFormats", args, 1);
  args[1] = *format.raw();
  Call("ffi.ModuleInspectSource (the default)", "ffi.ModuleInspectSource", args, 2);
  TVMFFIObjectDecRef(handle);
  printf("done\n");
  return 0;
}
