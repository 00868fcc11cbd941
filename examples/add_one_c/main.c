/* The host: loads the kernel library (with its embedded module tree) through
 * the C API, looks the kernel up, calls it on a tensor, and shows how an
 * error travels back. Usage: main <path to the kernel library>. */
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* Prints and releases the raised error. */
static void report_error(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  printf("error raised: %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
         (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(err);
}

/* Calls a global function by name; 0 on success. */
static int call_global(const char* name, TVMFFIAny* args, int n, TVMFFIAny* result) {
  TVMFFIByteArray arr = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&arr, &f) != 0 || f == NULL) return -1;
  memset(result, 0, sizeof(*result));
  int rc = TVMFFIFunctionCall(f, args, n, result);
  TVMFFIObjectDecRef(f);
  return rc;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <kernel library>\n", argv[0]);
    return 2;
  }
  TVMFFIVersion version;
  TVMFFIGetVersion(&version);
  printf("libtvm_ffi ABI %u.%u.%u\n", version.major, version.minor, version.patch);

  /* Load the library: its embedded tree is decoded, `_lib` is the library. */
  TVMFFIAny path, module, kind;
  memset(&path, 0, sizeof(path));
  path.type_index = kTVMFFIRawStr;
  path.v_c_str = argv[1];
  if (call_global("ffi.ModuleLoadFromFile", &path, 1, &module) != 0) {
    report_error();
    return 1;
  }
  if (call_global("ffi.ModuleGetKind", &module, 1, &kind) == 0) {
    printf("loaded %s: a module of kind '%.*s'\n", argv[1], (int)kind.small_str_len, kind.v_bytes);
  }

  /* Look the kernel up (and its doc) by name. */
  TVMFFIAny query[3], func, doc;
  memset(query, 0, sizeof(query));
  query[0] = module;
  query[1].type_index = kTVMFFIRawStr;
  query[1].v_c_str = "add_one_c";
  query[2].type_index = kTVMFFIBool;
  if (call_global("ffi.ModuleGetFunction", query, 3, &func) != 0 || func.type_index != kTVMFFIFunction) {
    fprintf(stderr, "add_one_c not found\n");
    return 1;
  }
  if (call_global("ffi.ModuleGetFunctionDoc", query, 3, &doc) == 0 && doc.type_index == kTVMFFIStr) {
    const TVMFFIByteArray* text = (const TVMFFIByteArray*)((char*)doc.v_obj + sizeof(TVMFFIObject));
    printf("doc: %.*s\n", (int)text->size, text->data);
    TVMFFIObjectDecRef(doc.v_obj);
  }

  /* Call it on tensors described by DLPack's DLTensor. */
  float xs[4] = {1, 2, 3, 4}, ys[4] = {0, 0, 0, 0};
  int64_t shape[1] = {4};
  DLTensor x = {xs, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor y = {ys, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  TVMFFIAny args[2], result;
  memset(args, 0, sizeof(args));
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &x;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &y;
  memset(&result, 0, sizeof(result));
  if (TVMFFIFunctionCall(func.v_obj, args, 2, &result) != 0) {
    report_error();
    return 1;
  }
  printf("add_one_c([1 2 3 4]) = [%g %g %g %g]\n", ys[0], ys[1], ys[2], ys[3]);

  /* Errors travel back through the thread-local slot. */
  memset(&result, 0, sizeof(result));
  if (TVMFFIFunctionCall(func.v_obj, args, 1, &result) != 0) report_error();

  TVMFFIObjectDecRef(func.v_obj);
  TVMFFIObjectDecRef(module.v_obj);
  return ys[3] == 5.0f ? 0 : 1;
}
