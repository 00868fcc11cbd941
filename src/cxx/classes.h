// Our own declarations of the tvm::ffi C++ classes that the official
// library's exported C++ symbols mention: same names (so the mangled names
// match), same layouts and the same calling conventions (every class here
// has a user-provided destructor, so like the official ones it is passed by
// invisible reference and returned through a hidden pointer). Only what the
// C++ layer needs is declared; the layouts are checked by static_asserts
// below and by the C++ tests compiled with the official headers.
#ifndef TVM_FFI_RS_CXX_CLASSES_H_
#define TVM_FFI_RS_CXX_CLASSES_H_

#include <tvm/ffi/c_api.h>

#include "std.h"

// What the library exports: a whole class (as the official one does) or
// one function. PE exports what is marked; on ELF and Mach-O the linker's
// export list (src/abi/exports.txt, written out by build/exports.rs) decides. A test program importing
// them defines it as __declspec(dllimport).
#ifndef TVM_FFI_RS_CXX_API
#ifdef _MSC_VER
#define TVM_FFI_RS_CXX_API __declspec(dllexport)
#else
#define TVM_FFI_RS_CXX_API __attribute__((visibility("default")))
#endif
#endif

namespace tvm {
namespace ffi {

/// The tag of the constructors that leave an object reference empty.
struct UnsafeInit {};

/// The base of every object: the C header, nothing else (not polymorphic).
class Object {
 public:
  Object() noexcept : header_() {}

 protected:
  TVMFFIObject header_;
};

/// An owning object pointer (nullable), 8 bytes.
class ObjectRef {
 public:
  ObjectRef() = default;
  /// Takes over one reference of `owned`.
  explicit ObjectRef(TVMFFIObject* owned) noexcept : data_(owned) {}
  ObjectRef(const ObjectRef& other) noexcept : data_(other.data_) {
    if (data_ != nullptr) TVMFFIObjectIncRef(data_);
  }
  ObjectRef(ObjectRef&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  ObjectRef& operator=(const ObjectRef& other) noexcept {
    ObjectRef copy(other);
    return *this = static_cast<ObjectRef&&>(copy);
  }
  ObjectRef& operator=(ObjectRef&& other) noexcept {
    TVMFFIObject* old = data_;
    data_ = other.data_;
    other.data_ = nullptr;
    if (old != nullptr) TVMFFIObjectDecRef(old);
    return *this;
  }
  ~ObjectRef() {
    if (data_ != nullptr) TVMFFIObjectDecRef(data_);
  }
  TVMFFIObject* get() const noexcept { return data_; }
  /// Gives the reference up to the caller.
  TVMFFIObject* release() noexcept {
    TVMFFIObject* out = data_;
    data_ = nullptr;
    return out;
  }

 protected:
  TVMFFIObject* data_ = nullptr;
};

namespace detail {
/// An owned TVMFFIAny, 16 bytes: the storage of Any, String, Bytes and the
/// Optional of value types.
class AnyCell {
 public:
  AnyCell() noexcept { data_ = TVMFFIAny{}; }
  /// Takes over `owned`.
  explicit AnyCell(TVMFFIAny owned) noexcept : data_(owned) {}
  AnyCell(const AnyCell& other) noexcept : data_(other.data_) {
    if (data_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectIncRef(data_.v_obj);
  }
  AnyCell(AnyCell&& other) noexcept : data_(other.data_) { other.data_ = TVMFFIAny{}; }
  AnyCell& operator=(const AnyCell&) = delete;
  AnyCell& operator=(AnyCell&& other) noexcept {
    AnyCell old(static_cast<AnyCell&&>(*this));
    data_ = other.data_;
    other.data_ = TVMFFIAny{};
    return *this;
  }
  ~AnyCell() {
    if (data_.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(data_.v_obj);
  }
  const TVMFFIAny* raw() const noexcept { return &data_; }
  /// An empty slot for a callee to write an owned value into.
  TVMFFIAny* raw() noexcept { return &data_; }
  /// Gives the value up to the caller.
  TVMFFIAny release() noexcept {
    TVMFFIAny out = data_;
    data_ = TVMFFIAny{};
    return out;
  }

 protected:
  TVMFFIAny data_;
};
}  // namespace detail

/// Any value, 16 bytes.
class Any : public detail::AnyCell {
  using AnyCell::AnyCell;
};
/// A str (small or an object), 16 bytes; empty by default.
class String : public detail::AnyCell {
 public:
  using AnyCell::AnyCell;
  String() noexcept { data_.type_index = kTVMFFISmallStr; }
};
/// Bytes (small or an object), 16 bytes; empty by default.
class Bytes : public detail::AnyCell {
 public:
  using AnyCell::AnyCell;
  Bytes() noexcept { data_.type_index = kTVMFFISmallBytes; }
};
/// A Function object reference.
class Function : public ObjectRef {
  using ObjectRef::ObjectRef;
};
/// An Array object reference.
template <typename T, typename = void>
class Array : public ObjectRef {
  using ObjectRef::ObjectRef;
};
/// A Map object reference.
template <typename K, typename V, typename = void>
class Map : public ObjectRef {
  using ObjectRef::ObjectRef;
};
/// A function of a fixed signature: one Function, 8 bytes.
template <typename FType>
class TypedFunction;
template <typename R, typename... Args>
class TypedFunction<R(Args...)> {
 public:
  const Function& packed() const noexcept { return packed_; }

 private:
  Function packed_;
};

/// Optional values: the official header picks the storage by T. Object
/// references keep theirs (NULL for none); String and int use an Any cell.
template <typename T, typename = void>
class Optional : public ObjectRef {
  using ObjectRef::ObjectRef;
};
template <>
class Optional<String> : public detail::AnyCell {
  using AnyCell::AnyCell;
};
template <>
class Optional<int> : public detail::AnyCell {
  using AnyCell::AnyCell;
};
/// A tuple object reference.
template <typename... Types>
class Tuple : public ObjectRef {
  using ObjectRef::ObjectRef;
};
namespace reflection {
/// An access path object reference.
class AccessPath : public ObjectRef {
  using ObjectRef::ObjectRef;
};
}  // namespace reflection

class Module;

namespace detail {
/// Registers `ffi.Module` (already known) and answers its index.
int32_t RegisterModuleType();
}  // namespace detail

/// The base of every module kind, with the official header's members in
/// its order (vtable slots included). That header defines the virtual
/// defaults inline; on ELF and Mach-O each subclass's compiler emits its
/// own copies, on Windows the official DLL exports them as this class's
/// members, so this library defines them (module.cc), as it defines what
/// the official library defines out of line.
class TVM_FFI_RS_CXX_API ModuleObj : public Object {
 public:
  /// A module with no imports.
  ModuleObj();

  virtual const char* kind() const = 0;
  virtual int GetPropertyMask() const;
  virtual Optional<Function> GetFunction(const String& name) = 0;
  virtual bool ImplementsFunction(const String& name);
  virtual Optional<String> GetFunctionDoc(const String& name);
  virtual Optional<String> GetFunctionMetadata(const String& name);
  virtual void WriteToFile(const String& file_name, const String& format) const;
  virtual Array<String> GetWriteFormats() const;
  virtual Bytes SaveToBytes() const;
  virtual String InspectSource(const String& format) const;
  virtual void ImportModule(const Module& other);
  virtual void ClearImports();

  Optional<Function> GetFunction(const String& name, bool query_imports);
  bool ImplementsFunction(const String& name, bool query_imports);
  Optional<String> GetFunctionDoc(const String& name, bool query_imports);
  Optional<String> GetFunctionMetadata(const String& name, bool query_imports);
  const Array<Any>& imports() const { return imports_; }

  struct InternalUnsafe;

  static constexpr const int32_t _type_index = kTVMFFIModule;
  static constexpr const bool _type_mutable = true;
  static constexpr const bool _type_final = true;
  static constexpr int32_t _type_depth = 1;
  static constexpr const char* _type_key = "ffi.Module";
  static int32_t RuntimeTypeIndex() noexcept { return _type_index; }
#ifdef _MSC_VER
  /// The registration hook of the official header (`ffi.Module` is
  /// registered when the library loads). Its static local and that
  /// local's guard are exported, as MSVC exports them (msvc_abi.cc).
  static int32_t _GetOrAllocRuntimeTypeIndex();
#else
  /// The registration hook of the official header: registers `ffi.Module`
  /// (already known) and answers its static index. Its static local is
  /// one of the exported symbols (a GNU unique object shared with every
  /// C++ consumer's copy).
  __attribute__((cold)) static int32_t _GetOrAllocRuntimeTypeIndex() {
    static int32_t tindex [[maybe_unused]] = detail::RegisterModuleType();
    return kTVMFFIModule;
  }
#endif

 protected:
  Array<Any> imports_;

 private:
  /// NULL until the first lookup from the imports (the core fills it).
  Map<String, Function> import_lookup_cache_;
};

namespace detail {
/// The object handle of a module (what C code sees).
inline TVMFFIObject* ModuleHandle(ModuleObj* module) noexcept {
  return reinterpret_cast<TVMFFIObject*>(static_cast<Object*>(module));
}
/// The module of an object handle.
inline ModuleObj* ModuleFromHandle(TVMFFIObject* handle) noexcept {
  return static_cast<ModuleObj*>(reinterpret_cast<Object*>(handle));
}
}  // namespace detail

/// A module reference, 8 bytes.
class Module : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
  TVM_FFI_RS_CXX_API static Module LoadFromFile(const String& file_name);
  TVM_FFI_RS_CXX_API static void VisitContextSymbols(
      const TypedFunction<void(String, void*)>& callback);
};

/// The Error object: the C header and the error cell.
class ErrorObj;

/// The error exception: an Error object reference, thrown and caught by
/// C++ code on both sides of the library boundary. The official header
/// defines its members inline; the official Windows DLL exports them, so
/// this library defines them there (msvc_abi.cc).
class TVM_FFI_RS_CXX_API Error : public ObjectRef, public std::exception {
 public:
  /// An empty reference.
  explicit Error(UnsafeInit) noexcept {}
  Error(const Error&) = default;
  Error(Error&&) = default;
  Error& operator=(const Error&) = default;
  Error& operator=(Error&&) = default;
#ifdef _MSC_VER
  Error(std::string kind, std::string message, std::string backtrace);
  Error(std::string kind, std::string message, std::string backtrace,
        std::optional<Error> cause_chain, std::optional<ObjectRef> extra_context);
  Error(std::string kind, std::string message, const TVMFFIByteArray* backtrace);
  std::string kind() const;
  std::string message() const;
  std::optional<Error> cause_chain() const;
  std::optional<ObjectRef> extra_context() const;
  std::string backtrace() const;
  std::string TracebackMostRecentCallLast() const;
  void UpdateBacktrace(const TVMFFIByteArray* backtrace_str, int32_t update_mode);
  std::string FullMessage() const;
  const ErrorObj* operator->() const;
  const ErrorObj* get() const;
  static constexpr bool _type_is_nullable = false;
#endif
  /// The message (NUL-terminated in every Error object), as the official
  /// header answers. Inline, as there, so the vtable is a weak definition.
  const char* what() const noexcept override {
    const char* cell = reinterpret_cast<const char*>(data_) + sizeof(TVMFFIObject);
    return reinterpret_cast<const TVMFFIErrorCell*>(cell)->message.data;
  }
};

namespace detail {
/// An Error holding one reference of an Error object.
inline Error ErrorFromOwned(TVMFFIObject* owned) noexcept {
  Error err{UnsafeInit{}};
  static_cast<ObjectRef&>(err) = ObjectRef(owned);
  return err;
}
/// The Error object an Error holds (borrowed).
inline TVMFFIObject* ErrorHandle(const Error& err) noexcept {
  return static_cast<const ObjectRef&>(err).get();
}
}  // namespace detail

/// Structural equality (its algorithms are the core's).
class StructuralEqual {
 public:
  TVM_FFI_RS_CXX_API static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                                       bool skip_tensor_content);
  TVM_FFI_RS_CXX_API static Optional<Tuple<reflection::AccessPath, reflection::AccessPath>>
  GetFirstMismatch(const Any& lhs, const Any& rhs, bool map_free_vars, bool skip_tensor_content);
};

/// Structural hashing.
class StructuralHash {
 public:
  TVM_FFI_RS_CXX_API static uint64_t Hash(const Any& value, bool map_free_vars,
                                          bool skip_tensor_content);
};

/// The context a structural visit attaches to errors.
class VisitErrorContext : public ObjectRef {
 public:
  TVM_FFI_RS_CXX_API static Array<reflection::AccessPath> FindAccessPaths(
      const ObjectRef& root, const VisitErrorContext& ctx, bool include_self);
};

TVM_FFI_RS_CXX_API bool RecursiveEq(const Any& lhs, const Any& rhs);
TVM_FFI_RS_CXX_API bool RecursiveLt(const Any& lhs, const Any& rhs);
TVM_FFI_RS_CXX_API bool RecursiveLe(const Any& lhs, const Any& rhs);
TVM_FFI_RS_CXX_API bool RecursiveGt(const Any& lhs, const Any& rhs);
TVM_FFI_RS_CXX_API bool RecursiveGe(const Any& lhs, const Any& rhs);
TVM_FFI_RS_CXX_API int64_t RecursiveHash(const Any& value);
TVM_FFI_RS_CXX_API Any DeepCopy(const Any& value);
TVM_FFI_RS_CXX_API String ReprPrint(const Any& value);
TVM_FFI_RS_CXX_API Any ToJSONGraph(const Any& value, const Any& metadata);
TVM_FFI_RS_CXX_API Any FromJSONGraph(const Any& value);

namespace json {
TVM_FFI_RS_CXX_API Any Parse(const String& json_str, String* error_msg);
TVM_FFI_RS_CXX_API String Stringify(const Any& value, const Optional<int>& indent);
}  // namespace json

static_assert(sizeof(ObjectRef) == 8 && sizeof(Any) == 16 && sizeof(String) == 16,
              "reference and value layouts");
static_assert(sizeof(Optional<String>) == 16 && sizeof(Optional<Function>) == 8,
              "Optional layouts");
#ifdef _MSC_VER
static_assert(sizeof(Error) == 32, "Error: std::exception (vfptr, what, flag), then the reference");
#else
static_assert(sizeof(Error) == 16, "Error is a vtable pointer and an object reference");
#endif
static_assert(sizeof(ModuleObj) == 48, "ModuleObj: vtable pointer, header, two fields");

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_RS_CXX_CLASSES_H_
