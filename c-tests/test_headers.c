/* The headers compile on their own, in C and (as test_headers.cc) in C++;
 * with DLPACK_FIRST the official dlpack/dlpack.h is included before them. */
#ifdef DLPACK_FIRST
#include DLPACK_FIRST
#endif
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/c_api.h>
#include <dlpack/dlpack.h>
#include <stdio.h>

int main(void) {
  TVMFFIAny value;
  value.type_index = kTVMFFIDevice;
  value.zero_padding = 0;
  value.v_device.device_type = kDLCUDA;
  value.v_device.device_id = 1;
  DLManagedTensorVersioned managed;
  managed.version.major = DLPACK_MAJOR_VERSION;
  managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  printf("headers ok: device %d:%d dlpack %u\n", (int)value.v_device.device_type,
         value.v_device.device_id, managed.version.major);
  return 0;
}
