// What only MSVC's C++ ABI needs (compiled for Windows only): the members
// of tvm::ffi::Error that the official header defines inline and the
// official DLL exports, the static local of
// ModuleObj::_GetOrAllocRuntimeTypeIndex and its guard, and the runtime
// hooks MSVC-compiled code expects in every module (operator new and
// delete on UCRT's heap, type_info's vftable).
#ifndef _MSC_VER
#error "msvc_abi.cc is built in MSVC's ABI only"
#endif

#include <limits.h>

#include "bridge.h"
#include "classes.h"
#include "guard.h"

namespace tvm {
namespace ffi {
namespace {

TVMFFIByteArray ByteView(const std::string& text) { return TVMFFIByteArray{text.data(), text.size()}; }

std::string Text(const TVMFFIByteArray& bytes) { return std::string(bytes.data, bytes.size); }

/// A new Error object (owned); throws the raised error on failure.
TVMFFIObject* NewError(const std::string& kind, const std::string& message,
                       const TVMFFIByteArray& backtrace, TVMFFIObject* cause,
                       TVMFFIObject* extra) {
  TVMFFIByteArray k = ByteView(kind), m = ByteView(message);
  TVMFFIObjectHandle out = nullptr;
  detail::Check(TVMFFIErrorCreateWithCauseAndExtraContext(&k, &m, &backtrace, cause, extra, &out));
  return static_cast<TVMFFIObject*>(out);
}

const TVMFFIErrorCell& Cell(const Error& err) { return *TVMFFIErrorGetCellPtr(detail::ErrorHandle(err)); }

/// A string of `parts` one after the other.
std::string Concat(std::initializer_list<TVMFFIByteArray> parts) {
  size_t size = 0;
  for (const TVMFFIByteArray& part : parts) size += part.size;
  std::string out(size, '\0');
  char* at = out.data();
  for (const TVMFFIByteArray& part : parts) {
    if (part.size != 0) __builtin_memcpy(at, part.data, part.size);
    at += part.size;
  }
  return out;
}

TVMFFIByteArray Literal(const char* text) { return TVMFFIByteArray{text, __builtin_strlen(text)}; }

}  // namespace

Error::Error(std::string kind, std::string message, std::string backtrace)
    : Error(UnsafeInit{}) {
  static_cast<ObjectRef&>(*this) =
      ObjectRef(NewError(kind, message, ByteView(backtrace), nullptr, nullptr));
}

Error::Error(std::string kind, std::string message, std::string backtrace,
             std::optional<Error> cause_chain, std::optional<ObjectRef> extra_context)
    : Error(UnsafeInit{}) {
  TVMFFIObject* cause = cause_chain.has_value() ? detail::ErrorHandle(*cause_chain) : nullptr;
  TVMFFIObject* extra = extra_context.has_value() ? (*extra_context).get() : nullptr;
  static_cast<ObjectRef&>(*this) = ObjectRef(NewError(kind, message, ByteView(backtrace), cause, extra));
}

Error::Error(std::string kind, std::string message, const TVMFFIByteArray* backtrace)
    : Error(UnsafeInit{}) {
  static_cast<ObjectRef&>(*this) =
      ObjectRef(NewError(kind, message, *backtrace, nullptr, nullptr));
}

std::string Error::kind() const { return Text(Cell(*this).kind); }

std::string Error::message() const { return Text(Cell(*this).message); }

std::string Error::backtrace() const { return Text(Cell(*this).backtrace); }

std::optional<Error> Error::cause_chain() const {
  TVMFFIObject* cause = static_cast<TVMFFIObject*>(Cell(*this).cause_chain);
  if (cause == nullptr) return std::nullopt;
  TVMFFIObjectIncRef(cause);
  return detail::ErrorFromOwned(cause);
}

std::optional<ObjectRef> Error::extra_context() const {
  TVMFFIObject* extra = static_cast<TVMFFIObject*>(Cell(*this).extra_context);
  if (extra == nullptr) return std::nullopt;
  TVMFFIObjectIncRef(extra);
  return ObjectRef(extra);
}

std::string Error::TracebackMostRecentCallLast() const {
  // The backtrace's lines (most recent first), last line first, empty
  // lines left out, each ended by a newline.
  const TVMFFIByteArray& backtrace = Cell(*this).backtrace;
  size_t size = 0;
  for (size_t end = backtrace.size; end > 0;) {
    size_t start = end;
    while (start > 0 && backtrace.data[start - 1] != '\n') --start;
    if (start != end && end < backtrace.size) size += end - start + 1;
    end = start == 0 ? 0 : start - 1;
  }
  std::string out(size, '\0');
  char* at = out.data();
  for (size_t end = backtrace.size; end > 0;) {
    size_t start = end;
    while (start > 0 && backtrace.data[start - 1] != '\n') --start;
    if (start != end && end < backtrace.size) {
      __builtin_memcpy(at, backtrace.data + start, end - start);
      at += end - start;
      *at++ = '\n';
    }
    end = start == 0 ? 0 : start - 1;
  }
  return out;
}

void Error::UpdateBacktrace(const TVMFFIByteArray* backtrace_str, int32_t update_mode) {
  TVMFFIObject* obj = detail::ErrorHandle(*this);
  TVMFFIErrorGetCellPtr(obj)->update_backtrace(obj, backtrace_str, update_mode);
}

std::string Error::FullMessage() const {
  const TVMFFIErrorCell& cell = Cell(*this);
  std::string traceback = TracebackMostRecentCallLast();
  return Concat({Literal("Traceback (most recent call last):\n"), ByteView(traceback), cell.kind,
                 Literal(": "), cell.message, Literal("\n")});
}

const ErrorObj* Error::operator->() const { return get(); }

const ErrorObj* Error::get() const {
  return reinterpret_cast<const ErrorObj*>(detail::ErrorHandle(*this));
}

// The registration hook's static local and its guard, under the names MSVC
// gives them. The guard holds the first epoch of MSVC's thread-safe
// statics, so a caller's inlined copy of the hook sees the local as
// initialised (ffi.Module is registered when the library loads).
extern "C++" {
TVM_FFI_RS_CXX_API int32_t module_tindex __asm__(
    "?tindex@?1??_GetOrAllocRuntimeTypeIndex@ModuleObj@ffi@tvm@@SAHXZ@4HA") = kTVMFFIModule;
TVM_FFI_RS_CXX_API int32_t module_tindex_guard __asm__(
    "?$TSS0@?1??_GetOrAllocRuntimeTypeIndex@ModuleObj@ffi@tvm@@SAHXZ@4HA") = INT_MIN;
}

int32_t ModuleObj::_GetOrAllocRuntimeTypeIndex() { return module_tindex; }

}  // namespace ffi
}  // namespace tvm
