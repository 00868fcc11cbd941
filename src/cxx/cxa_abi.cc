// What older official releases' compiled code needs from the runtime
// library, beyond the ABI: apache-tvm-ffi 0.1.0 and 0.1.1 were built by GCC
// 14, whose code calls the C++ runtime's `__cxa_call_terminate` when an
// exception leaves a `noexcept` function. GCC 14's libstdc++ defines it;
// GCC 12's (Debian 12, Ubuntu 22.04) does not, and only those releases' own
// libtvm_ffi.so happened to export it. Ours exports it on Linux
// (src/abi/exports.txt, `[linux]`), weak, so that a newer libstdc++'s (in
// a static link, or first in the search order) is the one used.

#include <exception>

extern "C" void* __cxa_begin_catch(void* exception) noexcept;

// The C++ runtime's meaning: the exception (if any) becomes the handled
// one, then the program terminates (std::terminate runs the terminate
// handler).
extern "C" [[noreturn]] __attribute__((weak, visibility("default"))) void __cxa_call_terminate(
    void* exception) noexcept {
  if (exception != nullptr) {
    __cxa_begin_catch(exception);
  }
  std::terminate();
}
