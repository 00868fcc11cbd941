// The parts of MSVC's C++ standard library the C++ layer uses, declared
// here so the layer builds in MSVC's ABI with clang or zig and no MSVC
// headers (-nostdlibinc): the same names (so mangled names match), the
// same layouts (x64 and ARM64 release builds), and memory from the heap
// MSVC's library uses: UCRT's, with its std::allocator's alignment of big
// blocks, since code built by MSVC frees what we allocate and the other
// way round. vcruntime140.dll (exceptions) and UCRT's heap are imported
// by src/module/objects/cxx.rs.
#ifndef TVM_FFI_RS_CXX_MSVC_STD_H_
#define TVM_FFI_RS_CXX_MSVC_STD_H_

#include <stddef.h>
#include <stdint.h>

extern "C" {
/// std::exception's data (vcruntime_exception.h).
struct __std_exception_data {
  const char* _What;
  bool _DoFree;
};
void __std_exception_copy(const __std_exception_data* from, __std_exception_data* to);
void __std_exception_destroy(__std_exception_data* data);
/// UCRT's allocator (what malloc and free call).
void* _malloc_base(size_t size);
void _free_base(void* block);
__declspec(dllimport) void AcquireSRWLockExclusive(void** lock);
__declspec(dllimport) void ReleaseSRWLockExclusive(void** lock);
}

namespace std {
using ::size_t;

/// std::exception as vcruntime_exception.h defines it (inline in every
/// module, as there).
class exception {
 public:
  exception() noexcept : _Data() {}
  exception(const exception& other) noexcept : _Data() { __std_exception_copy(&other._Data, &_Data); }
  exception& operator=(const exception& other) noexcept {
    if (this != &other) {
      __std_exception_destroy(&_Data);
      __std_exception_copy(&other._Data, &_Data);
    }
    return *this;
  }
  virtual ~exception() noexcept { __std_exception_destroy(&_Data); }
  virtual const char* what() const { return _Data._What ? _Data._What : "Unknown exception"; }

 private:
  __std_exception_data _Data;
};

template <class E>
class initializer_list {
 public:
  constexpr initializer_list() noexcept : first_(nullptr), last_(nullptr) {}
  constexpr initializer_list(const E* first, const E* last) noexcept : first_(first), last_(last) {}
  constexpr const E* begin() const noexcept { return first_; }
  constexpr const E* end() const noexcept { return last_; }
  constexpr size_t size() const noexcept { return static_cast<size_t>(last_ - first_); }

 private:
  const E* first_;
  const E* last_;
};

struct nothrow_t {
  explicit nothrow_t() = default;
};
inline constexpr nothrow_t nothrow{};

/// A lock on an SRW lock, as MSVC's std::mutex (constant-initialised, so
/// a static one needs no guard).
class mutex {
 public:
  constexpr mutex() noexcept = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;
  void lock() noexcept { AcquireSRWLockExclusive(&lock_); }
  void unlock() noexcept { ReleaseSRWLockExclusive(&lock_); }

 private:
  void* lock_ = nullptr;
};

template <class M>
class scoped_lock {
 public:
  explicit scoped_lock(M& m) noexcept : m_(m) { m_.lock(); }
  scoped_lock(const scoped_lock&) = delete;
  ~scoped_lock() { m_.unlock(); }

 private:
  M& m_;
};

template <class C>
struct char_traits;
template <class T>
class allocator;

namespace detail_msvc {
/// std::allocator<char>'s blocks: from UCRT's heap; blocks of 4096 bytes
/// or more are aligned to 32 with the heap pointer stored just before them
/// (_Allocate_manually_vector_aligned), as MSVC's deallocation expects.
inline constexpr size_t kBigBlock = 4096;
inline constexpr size_t kBigAlign = 32;
inline constexpr size_t kBigExtra = sizeof(void*) + kBigAlign - 1;
inline char* Allocate(size_t bytes) {
  if (bytes < kBigBlock) return static_cast<char*>(_malloc_base(bytes));
  if (bytes + kBigExtra < bytes) return nullptr;
  auto block = reinterpret_cast<uintptr_t>(_malloc_base(bytes + kBigExtra));
  if (block == 0) return nullptr;
  auto user = (block + kBigExtra) & ~(uintptr_t{kBigAlign} - 1);
  reinterpret_cast<uintptr_t*>(user)[-1] = block;
  return reinterpret_cast<char*>(user);
}
inline void Deallocate(char* ptr, size_t bytes) {
  if (bytes >= kBigBlock) ptr = reinterpret_cast<char*>(reinterpret_cast<uintptr_t*>(ptr)[-1]);
  _free_base(ptr);
}
}  // namespace detail_msvc

template <class C, class Traits = char_traits<C>, class Alloc = allocator<C>>
class basic_string;

/// MSVC's std::string: 16 bytes of inline buffer or a heap pointer, the
/// size and the capacity (15 while inline). Only the members the layer
/// uses; an allocation failure terminates, as there is no std::bad_alloc.
template <>
class basic_string<char, char_traits<char>, allocator<char>> {
 public:
  basic_string() noexcept { SetInline(0); }
  basic_string(const char* data, size_t size) { Assign(data, size); }
  basic_string(size_t size, char fill) {
    Assign(nullptr, size);
    for (size_t i = 0; i < size; ++i) this->data()[i] = fill;
  }
  basic_string(const basic_string& other) { Assign(other.data(), other.size_); }
  basic_string(basic_string&& other) noexcept : bx_(other.bx_), size_(other.size_), res_(other.res_) {
    other.SetInline(0);
  }
  basic_string& operator=(const basic_string&) = delete;
  ~basic_string() { Free(); }

  const char* data() const noexcept { return res_ > kInline ? bx_.ptr : bx_.buf; }
  char* data() noexcept { return res_ > kInline ? bx_.ptr : bx_.buf; }
  size_t size() const noexcept { return size_; }

 private:
  static constexpr size_t kInline = 15;
  void SetInline(size_t size) noexcept {
    size_ = size;
    res_ = kInline;
    bx_.buf[size] = '\0';
  }
  /// Fills the string with `size` bytes of `src` (or leaves them to the
  /// caller when `src` is NULL), with MSVC's growth rule for the capacity.
  void Assign(const char* src, size_t size) {
    char* dst = bx_.buf;
    if (size > kInline) {
      size_t capacity = size | kInline;
      if (capacity < 22) capacity = 22;
      dst = detail_msvc::Allocate(capacity + 1);
      if (dst == nullptr) __builtin_trap();
      bx_.ptr = dst;
      res_ = capacity;
    } else {
      res_ = kInline;
    }
    size_ = size;
    if (src != nullptr) __builtin_memcpy(dst, src, size);
    dst[size] = '\0';
  }
  void Free() noexcept {
    if (res_ > kInline) detail_msvc::Deallocate(bx_.ptr, res_ + 1);
  }

  union Storage {
    char buf[16];
    char* ptr;
  } bx_;
  size_t size_;
  size_t res_;
};
using string = basic_string<char>;
static_assert(sizeof(string) == 32, "MSVC's std::string is 32 bytes");

struct nullopt_t {
  struct Tag {};
  constexpr explicit nullopt_t(Tag) noexcept {}
};
inline constexpr nullopt_t nullopt{nullopt_t::Tag{}};

/// MSVC's std::optional for class types: the value, then the flag.
template <class T>
class optional {
 public:
  constexpr optional() noexcept : dummy_(), has_value_(false) {}
  constexpr optional(nullopt_t) noexcept : dummy_(), has_value_(false) {}
  optional(T&& value) : value_(static_cast<T&&>(value)), has_value_(true) {}
  optional(const optional& other) : dummy_(), has_value_(false) {
    if (other.has_value_) Emplace(other.value_);
  }
  optional(optional&& other) noexcept : dummy_(), has_value_(false) {
    if (other.has_value_) Emplace(static_cast<T&&>(other.value_));
  }
  optional& operator=(const optional&) = delete;
  ~optional() {
    if (has_value_) value_.~T();
  }
  bool has_value() const noexcept { return has_value_; }
  T& operator*() & noexcept { return value_; }
  const T& operator*() const& noexcept { return value_; }

 private:
  template <class U>
  void Emplace(U&& value) {
    new (&value_) T(static_cast<U&&>(value));
    has_value_ = true;
  }
  struct Dummy {
    constexpr Dummy() noexcept {}
  };
  union {
    Dummy dummy_;
    T value_;
  };
  bool has_value_;
};

}  // namespace std

inline void* operator new(size_t, void* where) noexcept { return where; }
inline void operator delete(void*, void*) noexcept {}
void* operator new(size_t size, const std::nothrow_t&) noexcept;
void operator delete(void* block) noexcept;
void operator delete(void* block, size_t size) noexcept;
void operator delete[](void* block) noexcept;
void operator delete[](void* block, size_t size) noexcept;

#endif  // TVM_FFI_RS_CXX_MSVC_STD_H_
