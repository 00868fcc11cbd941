// An extension built for the official runtime: C++ compiled with the
// official headers' TVM_FFI_DLL_EXPORT_TYPED_FUNC. test_module.c loads it
// into whichever runtime it runs on.
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <string>

static int AddOne(int x) { return x + 1; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
static tvm::ffi::String Greet(tvm::ffi::String name) {
  return tvm::ffi::String("hello " + std::string(name));
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(greet, Greet);
