// The standard library parts the C++ layer uses. Built in MSVC's ABI (the
// Windows DLL), they come from msvc/std.h, our own declarations with the
// layouts of MSVC's library; everywhere else from the compiler's library.
#ifndef TVM_FFI_RS_CXX_STD_H_
#define TVM_FFI_RS_CXX_STD_H_

#ifdef _MSC_VER
#include "msvc/std.h"
#else
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#endif

#endif  // TVM_FFI_RS_CXX_STD_H_
