// The headers in C++, including the inline cell accessors C++ code uses.
#ifdef DLPACK_FIRST
#include DLPACK_FIRST
#endif
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <cstdio>
#include <cstring>

int main() {
  TVMFFIAny out;
  TVMFFIByteArray text{"a heap string in C++", std::strlen("a heap string in C++")};
  if (TVMFFIStringFromByteArray(&text, &out) != 0) return 1;
  TVMFFIByteArray* cell = TVMFFIBytesGetByteArrayPtr(out.v_obj);
  bool same = cell->size == text.size && std::memcmp(cell->data, text.data, text.size) == 0;
  int32_t index = TVMFFIObjectGetTypeIndex(out.v_obj);
  TVMFFIObjectDecRef(out.v_obj);
  DLDevice dev = TVMFFIDLDeviceFromIntPair(kDLCPU, 0);
  std::printf("C++ accessors ok: type %d same %d device %d\n", index, same, dev.device_type);
  return same ? 0 : 1;
}
