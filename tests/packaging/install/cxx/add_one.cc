// A library exporting `add_one` the way C++ extensions of TVM-FFI do.
#include <tvm/ffi/function.h>

namespace {
int64_t AddOne(int64_t x) { return x + 1; }
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
