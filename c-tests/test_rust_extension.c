/* The Rust extension example (examples/rust_extension, built with tvmffi)
 * loaded as a module library and called through the C API, on ours and on
 * the official library: results, the Rust error and the panic. On Windows
 * (where it is built; on Linux the Python package loads it, see
 * tests/rust-api/extension) the extension imports the C functions from
 * tvm_ffi.dll, the DLL the program has loaded: either library. */
#include "common.h"

/* Prints a call's result (type index and value) or its raised error. */
static void call(TVMFFIAny mod, const char* name, TVMFFIAny* args, int n) {
  TVMFFIAny f = module_function(mod, name, 0), out = any_none();
  CHECK(f.type_index == kTVMFFIFunction);
  int rc = TVMFFIFunctionCall(f.v_obj, args, n, &out);
  if (rc != 0) {
    print_failure(name, rc, 0);
  } else if (out.type_index == kTVMFFIInt) {
    printf("%s: type %d value %lld\n", name, out.type_index, (long long)out.v_int64);
  } else if (out.type_index == kTVMFFISmallStr || out.type_index == kTVMFFIStr) {
    TVMFFIByteArray text = any_text(&out);
    printf("%s: type %s value %.*s\n", name, out.type_index == kTVMFFIStr ? "str" : "small str",
           (int)text.size, text.data);
  } else {
    TVMFFIAny repr = call_global("ffi.ReprPrint", &out, 1);
    TVMFFIByteArray text = any_text(&repr);
    printf("%s: object %.*s\n", name, (int)text.size, text.data);
    any_release(&repr);
  }
  any_release(&out);
  any_release(&f);
}

int main(void) {
  TVMFFIAny path = any_c_str(RUST_EXTENSION);
  TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
  CHECK(mod.type_index == kTVMFFIModule);
  TVMFFIAny x = any_int(41);
  call(mod, "add_one", &x, 1);
  TVMFFIAny greet[2] = {any_c_str("wine"), any_int(2)};
  call(mod, "greet", greet, 2);
  TVMFFIAny point[3] = {any_int(1), any_none(), any_c_str("p")};
  point[1].type_index = kTVMFFIFloat;
  point[1].v_float64 = 2.5;
  call(mod, "make_point", point, 3);
  TVMFFIAny code = any_int(7);
  call(mod, "fail", &code, 1);
  TVMFFIAny boom = any_c_str("boom");
  call(mod, "panics", &boom, 1);
  call(mod, "add_one", greet, 1);
  any_release(&mod);
  return 0;
}
