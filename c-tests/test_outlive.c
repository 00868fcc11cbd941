/* Objects outliving the library that made them: a closure whose safe_call
 * and deleter live in a loaded library, and an object whose deleter lives
 * there, are used and released after every module of that library is gone.
 * Ours only: the official library unmaps the library when its module is
 * released, and the process dies with SIGSEGV on the first call. Ours keeps
 * a loaded library mapped for the life of the process. */
#include "common.h"

static TVMFFIAny text_arg(const char* s) {
  TVMFFIAny a = any_none();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

static TVMFFIAny get_function(TVMFFIAny mod, const char* name) {
  TVMFFIAny args[3] = {mod, text_arg(name), any_none()};
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = 0;
  return call_global("ffi.ModuleGetFunction", args, 3);
}

int main(void) {
  TVMFFIAny closure = any_none(), obj = any_none();
  for (int round = 0; round < 2; ++round) {
    TVMFFIAny path = text_arg(PLUGIN_OUTLIVE);
    TVMFFIAny mod = call_global("ffi.ModuleLoadFromFile", &path, 1);
    TVMFFIAny make_closure = get_function(mod, "make_closure");
    TVMFFIAny make_object = get_function(mod, "make_object");
    CHECK(make_closure.type_index == kTVMFFIFunction && make_object.type_index == kTVMFFIFunction);
    TVMFFIAny x = any_int(41 + round);
    any_release(&closure);
    CHECK_OK(TVMFFIFunctionCall(make_closure.v_obj, &x, 1, &closure));
    any_release(&obj);
    CHECK_OK(TVMFFIFunctionCall(make_object.v_obj, NULL, 0, &obj));
    /* Every module and function taken from the library goes. */
    any_release(&make_closure);
    any_release(&make_object);
    any_release(&mod);
    TVMFFIAny r = any_none();
    CHECK_OK(TVMFFIFunctionCall(closure.v_obj, NULL, 0, &r));
    printf("round %d: closure() = %lld after its module was released\n", round, (long long)r.v_int64);
    CHECK(r.v_int64 == 41 + round);
  }
  /* The deleters run in the library's code, still mapped. */
  any_release(&closure);
  any_release(&obj);
  printf("closure and object released after their library's modules\n");
  return 0;
}
