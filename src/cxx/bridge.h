// The private interface between the C++ layer and the Rust core.
//
// Both directions use plain C signatures: 0 on success, nonzero with an
// error raised in TVM-FFI's thread-local slot. Nothing here is exported from
// libtvm_ffi.so (the version script keeps these names local). The Rust side
// mirrors every struct in src/module/objects/cxx.rs and src/module/load/cxx_core.rs with
// the same field order and checks the sizes at compile time; the
// static_asserts below do the same here.
#ifndef TVM_FFI_RS_CXX_BRIDGE_H_
#define TVM_FFI_RS_CXX_BRIDGE_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What a module made from a Rust `ModuleKind` does; `state` is the Rust
/// kind. String arguments are String cells (TVMFFIAny holding a str), results
/// written to `TVMFFIAny*` are owned values, `TVMFFIObject**` results owned
/// references (NULL for "none").
typedef struct {
  const char* (*kind)(void* state);
  int32_t (*property_mask)(void* state);
  int (*get_function)(void* state, TVMFFIObject* self, const TVMFFIAny* name, TVMFFIObject** out);
  int (*implements_function)(void* state, TVMFFIObject* self, const TVMFFIAny* name,
                             int32_t* out);
  /// The doc (`doc` != 0) or the metadata of function `name` (None if absent).
  int (*function_info)(void* state, const TVMFFIAny* name, int32_t doc, TVMFFIAny* out);
  int (*write_to_file)(void* state, const TVMFFIAny* path, const TVMFFIAny* format);
  int (*write_formats)(void* state, TVMFFIObject** out);
  int (*save_to_bytes)(void* state, TVMFFIAny* out);
  int (*inspect_source)(void* state, const TVMFFIAny* format, TVMFFIAny* out);
  void (*drop)(void* state);
} TVMFFIRsKindOps;

/// The Rust core as the exported C++ functions reach it. Module handles
/// are object handles (`ModuleObj*` + 8).
typedef struct {
  int (*get_function)(TVMFFIObject* mod, const TVMFFIAny* name, int32_t query_imports,
                      TVMFFIObject** out);
  int (*implements_function)(TVMFFIObject* mod, const TVMFFIAny* name, int32_t query_imports,
                             int32_t* out);
  int (*function_info)(TVMFFIObject* mod, const TVMFFIAny* name, int32_t doc,
                       int32_t query_imports, TVMFFIAny* out);
  int (*import_module)(TVMFFIObject* mod, TVMFFIObject* other);
  int (*clear_imports)(TVMFFIObject* mod);
  /// `*out` is borrowed: the module's lookup cache keeps it alive.
  int (*lookup_from_imports)(TVMFFIObject* mod, const char* name, TVMFFIObject** out);
  int (*load_from_file)(const TVMFFIAny* path, TVMFFIObject** out);
  int (*visit_context_symbols)(TVMFFIObject* callback);
  /// Calls the built-in global `name` (as registered by the library, not
  /// as possibly overridden since) for the C++ function `cxx_name`, which
  /// has the same arguments; `*out` is owned.
  int (*call_builtin)(const char* name, const char* cxx_name, const TVMFFIAny* args,
                      int32_t num_args, TVMFFIAny* out);
} TVMFFIRsCoreOps;

/// Installs the core (called once by the Rust side when the library loads).
void tvm_ffi_rs_install_core(const TVMFFIRsCoreOps* ops);

/// A new module object of a Rust kind, with no imports. Takes `state`
/// (released through `ops->drop` when the module dies, also on failure).
/// `*out` is an owned handle.
int tvm_ffi_rs_module_new(const TVMFFIRsKindOps* ops, void* state, TVMFFIObject** out);

// Virtual calls on any module (ours or a C++ subclass from elsewhere). A C++
// exception becomes a raised error: tvm::ffi::Error keeps its kind, other
// std::exceptions are InternalError as in the reference, anything else is an
// InternalError saying so.
int tvm_ffi_rs_module_kind(TVMFFIObject* mod, const char** out);
int tvm_ffi_rs_module_property_mask(TVMFFIObject* mod, int32_t* out);
int tvm_ffi_rs_module_get_function(TVMFFIObject* mod, const TVMFFIAny* name, TVMFFIObject** out);
int tvm_ffi_rs_module_implements_function(TVMFFIObject* mod, const TVMFFIAny* name,
                                          int32_t* out);
int tvm_ffi_rs_module_function_info(TVMFFIObject* mod, const TVMFFIAny* name, int32_t doc,
                                    TVMFFIAny* out);
int tvm_ffi_rs_module_write_to_file(TVMFFIObject* mod, const TVMFFIAny* path,
                                    const TVMFFIAny* format);
int tvm_ffi_rs_module_write_formats(TVMFFIObject* mod, TVMFFIObject** out);
int tvm_ffi_rs_module_save_to_bytes(TVMFFIObject* mod, TVMFFIAny* out);
int tvm_ffi_rs_module_inspect_source(TVMFFIObject* mod, const TVMFFIAny* format, TVMFFIAny* out);
int tvm_ffi_rs_module_import_module(TVMFFIObject* mod, TVMFFIObject* other);
int tvm_ffi_rs_module_clear_imports(TVMFFIObject* mod);
/// `ModuleObj::InternalUnsafe::GetFunctionFromImports`: the core's lookup
/// under the reference's lock. `*out` is borrowed.
int tvm_ffi_rs_module_lookup_from_imports(TVMFFIObject* mod, const char* name,
                                          TVMFFIObject** out);

#ifdef __cplusplus
}  // extern "C"
static_assert(sizeof(TVMFFIRsKindOps) == 10 * sizeof(void*), "TVMFFIRsKindOps layout");
static_assert(sizeof(TVMFFIRsCoreOps) == 9 * sizeof(void*), "TVMFFIRsCoreOps layout");
#endif

#endif  // TVM_FFI_RS_CXX_BRIDGE_H_
