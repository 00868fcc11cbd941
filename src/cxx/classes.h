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

#include <cstddef>
#include <cstdint>
#include <exception>

namespace tvm {
namespace ffi {

/// The base of every object: the C header, nothing else (not polymorphic).
class Object {
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
  ObjectRef& operator=(const ObjectRef&) = delete;
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

/// Optional values: the official header picks the storage by T; these are
/// the three storages the exported functions use.
template <typename T, typename = void>
class Optional;
template <>
class Optional<String> : public detail::AnyCell {
  using AnyCell::AnyCell;
};
template <>
class Optional<Function> : public ObjectRef {
  using ObjectRef::ObjectRef;
};
template <>
class Optional<int> : public detail::AnyCell {
  using AnyCell::AnyCell;
};

class Module;

/// The base of every module kind. The vtable slots follow the official
/// header's order. The official header defines most of them inline; each
/// subclass's compiler emits its own copies of those defaults into the
/// subclass's vtable, so the base vtable slots are never reached and are
/// declared pure here. ImportModule and ClearImports are out of line (the
/// first one is the key function: this library emits the vtable and
/// typeinfo, as the official one does).
class ModuleObj : public Object {
 public:
  virtual const char* kind() const = 0;
  virtual int GetPropertyMask() const = 0;
  virtual Optional<Function> GetFunction(const String& name) = 0;
  virtual bool ImplementsFunction(const String& name) = 0;
  virtual Optional<String> GetFunctionDoc(const String& name) = 0;
  virtual Optional<String> GetFunctionMetadata(const String& name) = 0;
  virtual void WriteToFile(const String& file_name, const String& format) const = 0;
  virtual Array<String> GetWriteFormats() const = 0;
  virtual Bytes SaveToBytes() const = 0;
  virtual String InspectSource(const String& format) const = 0;
  virtual void ImportModule(const Module& other);
  virtual void ClearImports();

  Optional<Function> GetFunction(const String& name, bool query_imports);
  bool ImplementsFunction(const String& name, bool query_imports);
  Optional<String> GetFunctionDoc(const String& name, bool query_imports);
  Optional<String> GetFunctionMetadata(const String& name, bool query_imports);

  struct InternalUnsafe;

  /// The registration hook of the official header: registers `ffi.Module`
  /// (already known) and answers its static index. Its static local is
  /// one of the exported symbols (a GNU unique object shared with every
  /// C++ consumer's copy).
  __attribute__((cold)) static int32_t _GetOrAllocRuntimeTypeIndex() {
    static int32_t tindex [[maybe_unused]] = RegisterType();
    return kTVMFFIModule;
  }

  /// The object handle of this module (what C code sees).
  TVMFFIObject* handle() noexcept { return reinterpret_cast<TVMFFIObject*>(&header_); }
  /// The module of an object handle.
  static ModuleObj* FromHandle(TVMFFIObject* handle) noexcept {
    return static_cast<ModuleObj*>(reinterpret_cast<Object*>(handle));
  }

 protected:
  /// Takes over one reference of `imports` (an Array).
  explicit ModuleObj(TVMFFIObject* imports) noexcept : imports_(imports) {}
  ~ModuleObj() = default;

  Array<Any> imports_;

 private:
  static int32_t RegisterType();
  Map<String, Function> import_lookup_cache_;
};

/// A module reference, 8 bytes.
class Module : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
  static Module LoadFromFile(const String& file_name);
  static void VisitContextSymbols(const TypedFunction<void(String, void*)>& callback);
};

/// The error exception: an Error object reference, thrown and caught by
/// C++ code on both sides of the library boundary.
class __attribute__((visibility("default"))) Error : public ObjectRef, public std::exception {
 public:
  /// Takes over one reference of an Error object.
  explicit Error(TVMFFIObject* owned) noexcept : ObjectRef(owned) {}
  /// The message (NUL-terminated in every Error object), as the official
  /// header answers. Inline, as there, so the vtable is a weak definition.
  const char* what() const noexcept override {
    const char* cell = reinterpret_cast<const char*>(data_) + sizeof(TVMFFIObject);
    return reinterpret_cast<const TVMFFIErrorCell*>(cell)->message.data;
  }
};

/// Structural equality (its algorithms are the core's).
class StructuralEqual {
 public:
  static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars, bool skip_tensor_content);
  /// Returns an Optional<reflection::AccessPathPair> (one object reference).
  static ObjectRef GetFirstMismatch(const Any& lhs, const Any& rhs, bool map_free_vars,
                                    bool skip_tensor_content);
};

/// Structural hashing.
class StructuralHash {
 public:
  static uint64_t Hash(const Any& value, bool map_free_vars, bool skip_tensor_content);
};

/// The context a structural visit attaches to errors.
class VisitErrorContext : public ObjectRef {
 public:
  /// Returns an Array<reflection::AccessPath> (one object reference).
  static ObjectRef FindAccessPaths(const ObjectRef& root, const VisitErrorContext& ctx,
                                   bool include_self);
};

bool RecursiveEq(const Any& lhs, const Any& rhs);
bool RecursiveLt(const Any& lhs, const Any& rhs);
bool RecursiveLe(const Any& lhs, const Any& rhs);
bool RecursiveGt(const Any& lhs, const Any& rhs);
bool RecursiveGe(const Any& lhs, const Any& rhs);
int64_t RecursiveHash(const Any& value);
Any DeepCopy(const Any& value);
String ReprPrint(const Any& value);
Any ToJSONGraph(const Any& value, const Any& metadata);
Any FromJSONGraph(const Any& value);

namespace json {
Any Parse(const String& json_str, String* error_msg);
String Stringify(const Any& value, const Optional<int>& indent);
}  // namespace json

static_assert(sizeof(ObjectRef) == 8 && sizeof(Any) == 16 && sizeof(String) == 16,
              "reference and value layouts");
static_assert(sizeof(Optional<String>) == 16 && sizeof(Optional<Function>) == 8,
              "Optional layouts");
static_assert(sizeof(Error) == 16, "Error is a vtable pointer and an object reference");
static_assert(sizeof(ModuleObj) == 48, "ModuleObj: vtable pointer, header, two fields");

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_RS_CXX_CLASSES_H_
