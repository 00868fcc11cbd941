// Crossing the boundary between C++ exceptions and raised errors.
#ifndef TVM_FFI_RS_CXX_GUARD_H_
#define TVM_FFI_RS_CXX_GUARD_H_

#include "bridge.h"
#include "classes.h"

namespace tvm {
namespace ffi {
namespace detail {

/// Throws this thread's raised error as a tvm::ffi::Error.
[[noreturn]] inline void ThrowRaised() {
  TVMFFIObjectHandle raised = nullptr;
  TVMFFIErrorMoveFromRaised(&raised);
  if (raised == nullptr) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", "a call failed without raising an error");
    TVMFFIErrorMoveFromRaised(&raised);
  }
  throw ErrorFromOwned(static_cast<TVMFFIObject*>(raised));
}

/// Throws the raised error when a C-convention call failed.
inline void Check(int code) {
  if (code != 0) ThrowRaised();
}

/// Runs `body`, turning any exception into a raised error and -1:
/// tvm::ffi::Error as it is, std::exception as an InternalError (the
/// reference's rule), anything else as an InternalError saying so (the
/// reference lets those escape).
template <typename F>
int Guard(F&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const Error& err) {
    TVMFFIErrorSetRaised(ErrorHandle(err));
  } catch (const std::exception& err) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", err.what());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("InternalError",
                                 "a C++ exception that is not a std::exception was thrown");
  }
  return -1;
}

/// A String argument cell seen as the String class (same layout).
inline const String& AsString(const TVMFFIAny* cell) noexcept {
  return *reinterpret_cast<const String*>(cell);
}

/// The installed Rust core; throws if it is missing.
const TVMFFIRsCoreOps& Core();

}  // namespace detail
}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_RS_CXX_GUARD_H_
