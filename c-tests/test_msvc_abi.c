/* Every C++ symbol tvm_ffi.dll exports in MSVC's ABI (x64), called from C
 * as MSVC-compiled code calls it: `this` first, a class result through a
 * hidden pointer (after `this` for members, first for the others), class
 * arguments by value as pointers to the caller's copies, which the callee
 * destroys, std::string and std::optional in MSVC's layouts on UCRT's
 * heap. Windows x64 only, run under Wine on ours and on the official DLL;
 * the transcripts must match. The calls that throw C++ exceptions are left
 * out (C cannot catch them); test_msvc_extension covers throwing. */
#include <windows.h>
#include <limits.h>
#include <stdbool.h>
#include "common.h"

/* ---- MSVC's layouts ---------------------------------------------------- */

typedef struct {
  union {
    char buf[16];
    char* ptr;
  } bx;
  size_t size;
  size_t res; /* capacity; 15 while inline */
} MsvcString;

typedef struct {
  void** vfptr;
  const char* what; /* std::exception's data */
  bool do_free;
  TVMFFIObject* data; /* ObjectRef */
} MsvcError;

typedef struct {
  MsvcError value;
  bool has_value;
} MsvcOptionalError;

typedef struct {
  TVMFFIObject* value;
  bool has_value;
} MsvcOptionalRef;

typedef struct {
  void** vfptr;
  TVMFFIObject header;
  TVMFFIObject* imports;
  TVMFFIObject* import_lookup_cache;
} MsvcModuleObj;

_Static_assert(sizeof(MsvcString) == 32, "std::string");
_Static_assert(sizeof(MsvcError) == 32, "Error");
_Static_assert(sizeof(MsvcOptionalError) == 40, "std::optional<Error>");
_Static_assert(sizeof(MsvcOptionalRef) == 16, "std::optional<ObjectRef>");
_Static_assert(sizeof(MsvcModuleObj) == 48, "ModuleObj");

static HMODULE dll;
static void* (*ucrt_malloc)(size_t);
static void (*ucrt_free)(void*);

static void* sym(const char* name) {
  void* p = (void*)GetProcAddress(dll, name);
  if (p == NULL) {
    printf("not exported: %s\n", name);
    exit(1);
  }
  return p;
}

/* std::allocator<char>'s blocks: big ones aligned to 32, the heap pointer
 * before them. */
static char* msvc_allocate(size_t bytes) {
  if (bytes < 4096) return (char*)ucrt_malloc(bytes);
  uintptr_t block = (uintptr_t)ucrt_malloc(bytes + 39);
  uintptr_t user = (block + 39) & ~(uintptr_t)31;
  ((uintptr_t*)user)[-1] = block;
  return (char*)user;
}

static void msvc_deallocate(char* p, size_t bytes) {
  if (bytes >= 4096) p = (char*)((uintptr_t*)p)[-1];
  ucrt_free(p);
}

static const char* str_data(const MsvcString* s) { return s->res > 15 ? s->bx.ptr : s->bx.buf; }

static MsvcString str_make(const char* text) {
  MsvcString s;
  memset(&s, 0, sizeof(s));
  s.size = strlen(text);
  char* dst = s.bx.buf;
  s.res = 15;
  if (s.size > 15) {
    s.res = s.size | 15;
    dst = s.bx.ptr = msvc_allocate(s.res + 1);
  }
  memcpy(dst, text, s.size + 1);
  return s;
}

static void str_destroy(MsvcString* s) {
  if (s->res > 15) msvc_deallocate(s->bx.ptr, s->res + 1);
}

/* Prints a returned string, then destroys it as its caller must. */
static void print_str(const char* label, MsvcString* s) {
  if (s->size > 200) {
    printf("%s: %zu bytes, \"%.40s...\"\n", label, s->size, str_data(s));
  } else {
    printf("%s: \"%.*s\"\n", label, (int)s->size, str_data(s));
  }
  if (str_data(s)[s->size] != 0) printf("%s: not NUL-terminated\n", label);
  str_destroy(s);
}

static TVMFFIAny str_any(const char* text) {
  TVMFFIByteArray b = byte_array(text);
  TVMFFIAny out = any_none();
  CHECK_OK(TVMFFIStringFromByteArray(&b, &out));
  return out;
}

static void print_any(const char* label, TVMFFIAny* v) {
  if (v->type_index == kTVMFFISmallStr || v->type_index == kTVMFFIStr) {
    TVMFFIByteArray t = any_text(v);
    printf("%s: str \"%.*s\"\n", label, (int)t.size, t.data);
  } else if (v->type_index < kTVMFFIStaticObjectBegin) {
    printf("%s: type %d value %lld\n", label, v->type_index, (long long)v->v_int64);
  } else {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(v->type_index);
    printf("%s: %.*s\n", label, (int)info->type_key.size, info->type_key.data);
  }
  any_release(v);
}

static int ref_count(TVMFFIObject* obj) { return (int)(obj->combined_ref_count & 0xffffffff); }

/* ---- tvm::ffi::Error --------------------------------------------------- */

#define STRING_T "V?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@"

typedef void* (*Ctor3)(MsvcError*, MsvcString*, MsvcString*, MsvcString*);
typedef void* (*Ctor5)(MsvcError*, MsvcString*, MsvcString*, MsvcString*, MsvcOptionalError*,
                       MsvcOptionalRef*);
typedef void* (*CtorBytes)(MsvcError*, MsvcString*, MsvcString*, const TVMFFIByteArray*);
typedef void* (*CtorTag)(MsvcError*, int);
typedef void* (*CtorFrom)(MsvcError*, MsvcError*);
typedef void (*Dtor)(void*);
typedef MsvcString* (*StringGetter)(const MsvcError*, MsvcString*);

static Dtor error_dtor;

static void error_strings(const char* label, const MsvcError* err) {
  static const char* const kGetters[][2] = {
      {"kind", "?kind@Error@ffi@tvm@@QEBA?AV?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@XZ"},
      {"message", "?message@Error@ffi@tvm@@QEBA?AV?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@XZ"},
      {"backtrace", "?backtrace@Error@ffi@tvm@@QEBA?AV?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@XZ"},
      {"TracebackMostRecentCallLast",
       "?TracebackMostRecentCallLast@Error@ffi@tvm@@QEBA?AV?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@XZ"},
      {"FullMessage", "?FullMessage@Error@ffi@tvm@@QEBA?AV?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@XZ"},
  };
  for (size_t i = 0; i < sizeof(kGetters) / sizeof(kGetters[0]); ++i) {
    MsvcString out;
    MsvcString* r = ((StringGetter)sym(kGetters[i][1]))(err, &out);
    char line[128];
    snprintf(line, sizeof(line), "%s.%s()", label, kGetters[i][0]);
    if (r != &out) printf("%s: did not return the hidden pointer\n", line);
    print_str(line, &out);
  }
  const char* (*what)(const MsvcError*) =
      (const char* (*)(const MsvcError*))sym("?what@Error@ffi@tvm@@UEBAPEBDXZ");
  printf("%s.what(): \"%s\"\n", label, what(err));
  const char* (*virtual_what)(const MsvcError*) = (const char* (*)(const MsvcError*))err->vfptr[1];
  printf("%s.what() through the vftable: \"%s\"\n", label, virtual_what(err));
}

static void test_error(void) {
  void** vftable = (void**)sym("??_7Error@ffi@tvm@@6B@");
  error_dtor = (Dtor)sym("??1Error@ffi@tvm@@UEAA@XZ");
  printf("Error::_type_is_nullable = %d\n", *(const bool*)sym("?_type_is_nullable@Error@ffi@tvm@@2_NB"));

  /* Three strings: inline, heap, and a big block. */
  char* big = (char*)malloc(5001);
  for (int i = 0; i < 5000; ++i) big[i] = i % 100 == 99 ? '\n' : (char)('a' + i % 26);
  big[5000] = 0;
  MsvcString k = str_make("ValueError"), m = str_make("a message longer than fifteen bytes");
  MsvcString b = str_make(big);
  MsvcError e1;
  void* r = ((Ctor3)sym("??0Error@ffi@tvm@@QEAA@" STRING_T "00@Z"))(&e1, &k, &m, &b);
  printf("Error(kind, message, backtrace): returns this %d, vftable %d, what/do_free %p/%d, refs %d\n",
         r == &e1, e1.vfptr == vftable, (void*)e1.what, e1.do_free, ref_count(e1.data));
  error_strings("e1", &e1);

  MsvcString k2 = str_make("RuntimeError"), m2 = str_make("short");
  TVMFFIByteArray bt = byte_array("frame one\nframe two\n\nframe three\ntrailing");
  MsvcError e2;
  ((CtorBytes)sym("??0Error@ffi@tvm@@QEAA@" STRING_T "0PEBUTVMFFIByteArray@@@Z"))(&e2, &k2, &m2, &bt);
  error_strings("e2", &e2);

  /* UpdateBacktrace: replace, then append. */
  void (*update)(MsvcError*, const TVMFFIByteArray*, int) =
      (void (*)(MsvcError*, const TVMFFIByteArray*, int))sym(
          "?UpdateBacktrace@Error@ffi@tvm@@QEAAXPEBUTVMFFIByteArray@@H@Z");
  TVMFFIByteArray replaced = byte_array("replaced\n");
  update(&e2, &replaced, kTVMFFIBacktraceUpdateModeReplace);
  TVMFFIByteArray appended = byte_array("appended\n");
  update(&e2, &appended, kTVMFFIBacktraceUpdateModeAppend);
  error_strings("e2 updated", &e2);

  /* Cause and extra context (the optionals passed by value, destroyed by
   * the callee: e2's copy and the context's reference). */
  MsvcOptionalError cause;
  memset(&cause, 0, sizeof(cause));
  ((CtorFrom)sym("??0Error@ffi@tvm@@QEAA@AEBV012@@Z"))(&cause.value, &e2);
  cause.has_value = true;
  printf("copy: refs of e2's object now %d\n", ref_count(e2.data));
  TVMFFIAny context = call_global("ffi.Array", NULL, 0);
  TVMFFIObjectIncRef(context.v_obj);
  MsvcOptionalRef extra = {context.v_obj, true};
  MsvcString k3 = str_make("TypeError"), m3 = str_make("with a cause"), b3 = str_make("");
  MsvcError e3;
  ((Ctor5)sym("??0Error@ffi@tvm@@QEAA@" STRING_T "00V?$optional@VError@ffi@tvm@@@4@V?$optional@VObjectRef@ffi@tvm@@@4@@Z"))(
      &e3, &k3, &m3, &b3, &cause, &extra);
  printf("Error(..., cause, context): e2's object refs %d, context refs %d\n", ref_count(e2.data),
         ref_count(context.v_obj));
  MsvcOptionalError got_cause;
  ((MsvcOptionalError * (*)(const MsvcError*, MsvcOptionalError*))
       sym("?cause_chain@Error@ffi@tvm@@QEBA?AV?$optional@VError@ffi@tvm@@@std@@XZ"))(&e3, &got_cause);
  printf("e3.cause_chain(): has %d, same object %d, vftable %d\n", got_cause.has_value,
         got_cause.value.data == e2.data, got_cause.value.vfptr == vftable);
  if (got_cause.has_value) {
    error_strings("e3 cause", &got_cause.value);
    error_dtor(&got_cause.value);
  }
  MsvcOptionalRef got_extra;
  ((MsvcOptionalRef * (*)(const MsvcError*, MsvcOptionalRef*))
       sym("?extra_context@Error@ffi@tvm@@QEBA?AV?$optional@VObjectRef@ffi@tvm@@@std@@XZ"))(&e3, &got_extra);
  printf("e3.extra_context(): has %d, same object %d, context refs %d\n", got_extra.has_value,
         got_extra.value == context.v_obj, ref_count(context.v_obj));
  if (got_extra.has_value) TVMFFIObjectDecRef(got_extra.value);
  MsvcOptionalError no_cause;
  ((MsvcOptionalError * (*)(const MsvcError*, MsvcOptionalError*))
       sym("?cause_chain@Error@ffi@tvm@@QEBA?AV?$optional@VError@ffi@tvm@@@std@@XZ"))(&e1, &no_cause);
  printf("e1.cause_chain(): has %d\n", no_cause.has_value);

  /* get(), operator->, the tag constructor, moves and assignments. */
  const void* (*get)(const MsvcError*) =
      (const void* (*)(const MsvcError*))sym("?get@Error@ffi@tvm@@QEBAPEBVErrorObj@23@XZ");
  const void* (*arrow)(const MsvcError*) =
      (const void* (*)(const MsvcError*))sym("??CError@ffi@tvm@@QEBAPEBVErrorObj@12@XZ");
  printf("get() is the object %d, operator-> is the object %d\n", get(&e1) == e1.data,
         arrow(&e1) == e1.data);
  MsvcError empty;
  memset(&empty, 0xab, sizeof(empty));
  ((CtorTag)sym("??0Error@ffi@tvm@@QEAA@UUnsafeInit@12@@Z"))(&empty, 0);
  printf("Error(UnsafeInit): vftable %d, data NULL %d, what NULL %d\n", empty.vfptr == vftable,
         empty.data == NULL, empty.what == NULL);
  MsvcError moved;
  ((CtorFrom)sym("??0Error@ffi@tvm@@QEAA@$$QEAV012@@Z"))(&moved, &e1);
  printf("move: source empty %d, refs %d\n", e1.data == NULL, ref_count(moved.data));
  MsvcError* (*copy_assign)(MsvcError*, const MsvcError*) =
      (MsvcError * (*)(MsvcError*, const MsvcError*)) sym("??4Error@ffi@tvm@@QEAAAEAV012@AEBV012@@Z");
  MsvcError* (*move_assign)(MsvcError*, MsvcError*) =
      (MsvcError * (*)(MsvcError*, MsvcError*)) sym("??4Error@ffi@tvm@@QEAAAEAV012@$$QEAV012@@Z");
  int is_this = copy_assign(&empty, &moved) == &empty;
  printf("copy-assign returns this %d, refs %d\n", is_this, ref_count(moved.data));
  is_this = move_assign(&e1, &empty) == &e1;
  printf("move-assign returns this %d, source empty %d, refs %d\n", is_this, empty.data == NULL,
         ref_count(e1.data));

  /* The vftable's deleting destructor, without freeing (flags 0). */
  void* (*deleting)(MsvcError*, unsigned) = (void* (*)(MsvcError*, unsigned))vftable[0];
  deleting(&moved, 0);
  printf("deleting destructor (no delete): refs %d\n", ref_count(e1.data));
  error_dtor(&e1);
  error_dtor(&empty);
  error_dtor(&e2);
  error_dtor(&e3);
  any_release(&context);
  free(big);
}

/* ---- tvm::ffi::ModuleObj and Module ------------------------------------ */

typedef TVMFFIAny* (*AnyOut1)(TVMFFIAny*, const TVMFFIAny*);

static void test_module(void) {
  void** vftable = (void**)sym("??_7ModuleObj@ffi@tvm@@6B@");
  printf("ModuleObj::_type_index %d _type_depth %d _type_final %d _type_mutable %d _type_key %s\n",
         *(const int*)sym("?_type_index@ModuleObj@ffi@tvm@@2HB"),
         *(const int*)sym("?_type_depth@ModuleObj@ffi@tvm@@2HB"),
         *(const bool*)sym("?_type_final@ModuleObj@ffi@tvm@@2_NB"),
         *(const bool*)sym("?_type_mutable@ModuleObj@ffi@tvm@@2_NB"),
         *(const char* const*)sym("?_type_key@ModuleObj@ffi@tvm@@2QEBDEB"));
  int (*alloc_index)(void) = (int (*)(void))sym("?_GetOrAllocRuntimeTypeIndex@ModuleObj@ffi@tvm@@SAHXZ");
  int (*runtime_index)(void) = (int (*)(void))sym("?RuntimeTypeIndex@ModuleObj@ffi@tvm@@SAHXZ");
  int allocated = alloc_index();
  printf("_GetOrAllocRuntimeTypeIndex() %d, RuntimeTypeIndex() %d\n", allocated, runtime_index());
  int tindex = *(const int*)sym("?tindex@?1??_GetOrAllocRuntimeTypeIndex@ModuleObj@ffi@tvm@@SAHXZ@4HA");
  int guard = *(const int*)sym("?$TSS0@?1??_GetOrAllocRuntimeTypeIndex@ModuleObj@ffi@tvm@@SAHXZ@4HA");
  printf("its static local %d, whose guard says initialised: %d\n", tindex, guard != 0 && guard != -1);

  /* The default constructor (what an MSVC subclass's constructor calls),
   * the copies, the destructor. */
  MsvcModuleObj m1, m2;
  memset(&m1, 0, sizeof(m1));
  ((void* (*)(MsvcModuleObj*))sym("??0ModuleObj@ffi@tvm@@QEAA@XZ"))(&m1);
  const TVMFFIObject* const* imports =
      ((const TVMFFIObject* const* (*)(const MsvcModuleObj*))sym(
          "?imports@ModuleObj@ffi@tvm@@QEBAAEBV?$Array@VAny@ffi@tvm@@X@23@XZ"))(&m1);
  printf("ModuleObj(): vftable %d, header refs %d type %d, imports() is the field %d, an Array %d\n",
         m1.vfptr == vftable, ref_count(&m1.header), m1.header.type_index, (const void*)imports == (const void*)&m1.imports,
         m1.imports != NULL && m1.imports->type_index == kTVMFFIArray);
  int (*property_mask)(const MsvcModuleObj*) =
      (int (*)(const MsvcModuleObj*))sym("?GetPropertyMask@ModuleObj@ffi@tvm@@UEBAHXZ");
  printf("default GetPropertyMask() %d\n", property_mask(&m1));
  TVMFFIAny name = str_any("f"), out = any_none();
  ((TVMFFIAny * (*)(MsvcModuleObj*, TVMFFIAny*, const TVMFFIAny*))
       sym("?GetFunctionDoc@ModuleObj@ffi@tvm@@UEAA?AV?$Optional@VString@ffi@tvm@@X@23@AEBVString@23@@Z"))(&m1, &out, &name);
  print_any("default GetFunctionDoc(f)", &out);
  ((TVMFFIAny * (*)(MsvcModuleObj*, TVMFFIAny*, const TVMFFIAny*))
       sym("?GetFunctionMetadata@ModuleObj@ffi@tvm@@UEAA?AV?$Optional@VString@ffi@tvm@@X@23@AEBVString@23@@Z"))(&m1, &out, &name);
  print_any("default GetFunctionMetadata(f)", &out);
  ((TVMFFIAny * (*)(const MsvcModuleObj*, TVMFFIAny*, const TVMFFIAny*))
       sym("?InspectSource@ModuleObj@ffi@tvm@@UEBA?AVString@23@AEBV423@@Z"))(&m1, &out, &name);
  print_any("default InspectSource(f)", &out);
  TVMFFIObject* formats = NULL;
  ((TVMFFIObject * *(*)(const MsvcModuleObj*, TVMFFIObject**))
       sym("?GetWriteFormats@ModuleObj@ffi@tvm@@UEBA?AV?$Array@VString@ffi@tvm@@X@23@XZ"))(&m1, &formats);
  printf("default GetWriteFormats(): an Array %d\n", formats != NULL && formats->type_index == kTVMFFIArray);
  if (formats != NULL) TVMFFIObjectDecRef(formats);
  any_release(&name);

  ((void* (*)(MsvcModuleObj*, const MsvcModuleObj*))sym("??0ModuleObj@ffi@tvm@@QEAA@AEBV012@@Z"))(&m2, &m1);
  printf("copy: same imports %d, imports refs %d\n", m2.imports == m1.imports, ref_count(m1.imports));
  MsvcModuleObj* (*copy_assign)(MsvcModuleObj*, const MsvcModuleObj*) =
      (MsvcModuleObj * (*)(MsvcModuleObj*, const MsvcModuleObj*))
          sym("??4ModuleObj@ffi@tvm@@QEAAAEAV012@AEBV012@@Z");
  MsvcModuleObj* (*move_assign)(MsvcModuleObj*, MsvcModuleObj*) =
      (MsvcModuleObj * (*)(MsvcModuleObj*, MsvcModuleObj*))
          sym("??4ModuleObj@ffi@tvm@@QEAAAEAV012@$$QEAV012@@Z");
  int is_this = copy_assign(&m2, &m1) == &m2;
  printf("copy-assign returns this %d, imports refs %d\n", is_this, ref_count(m1.imports));
  MsvcModuleObj m3;
  ((void* (*)(MsvcModuleObj*, MsvcModuleObj*))sym("??0ModuleObj@ffi@tvm@@QEAA@$$QEAV012@@Z"))(&m3, &m2);
  printf("move: source imports NULL %d, imports refs %d\n", m2.imports == NULL, ref_count(m1.imports));
  is_this = move_assign(&m2, &m3) == &m2;
  printf("move-assign returns this %d, imports refs %d\n", is_this, ref_count(m1.imports));
  Dtor module_dtor = (Dtor)sym("??1ModuleObj@ffi@tvm@@QEAA@XZ");
  module_dtor(&m3);
  module_dtor(&m2);
  printf("after two destructors: imports refs %d\n", ref_count(m1.imports));
  module_dtor(&m1);

  /* Module::LoadFromFile (static: the result pointer first), then the
   * non-virtual lookups on the loaded module. */
  TVMFFIAny path = str_any(PLUGIN_PLAIN);
  TVMFFIObject* mod = NULL;
  ((TVMFFIObject * *(*)(TVMFFIObject**, const TVMFFIAny*))
       sym("?LoadFromFile@Module@ffi@tvm@@SA?AV123@AEBVString@23@@Z"))(&mod, &path);
  any_release(&path);
  printf("Module::LoadFromFile(plugin_plain): type %d\n", mod->type_index);
  MsvcModuleObj* obj = (MsvcModuleObj*)((char*)mod - sizeof(void*));
  static const char* const kNames[] = {"add", "missing"};
  for (int i = 0; i < 2; ++i) {
    for (int query_imports = 0; query_imports < 2; ++query_imports) {
      TVMFFIAny fname = str_any(kNames[i]);
      TVMFFIObject* f = NULL;
      ((TVMFFIObject * *(*)(MsvcModuleObj*, TVMFFIObject**, const TVMFFIAny*, bool))
           sym("?GetFunction@ModuleObj@ffi@tvm@@QEAA?AV?$Optional@VFunction@ffi@tvm@@X@23@AEBVString@23@_N@Z"))(
          obj, &f, &fname, query_imports);
      bool implements = ((bool (*)(MsvcModuleObj*, const TVMFFIAny*, bool))sym(
          "?ImplementsFunction@ModuleObj@ffi@tvm@@QEAA_NAEBVString@23@_N@Z"))(obj, &fname, query_imports);
      printf("GetFunction(%s, %d): %s, ImplementsFunction: %d\n", kNames[i], query_imports,
             f ? "a function" : "none", implements);
      if (f != NULL) {
        TVMFFIAny args[2] = {any_int(40), any_int(2)}, res = any_none();
        CHECK_OK(TVMFFIFunctionCall(f, args, 2, &res));
        printf("  called with (40, 2): %lld\n", (long long)res.v_int64);
        TVMFFIObjectDecRef(f);
      }
      TVMFFIAny doc = any_none();
      ((TVMFFIAny * (*)(MsvcModuleObj*, TVMFFIAny*, const TVMFFIAny*, bool))
           sym("?GetFunctionDoc@ModuleObj@ffi@tvm@@QEAA?AV?$Optional@VString@ffi@tvm@@X@23@AEBVString@23@_N@Z"))(
          obj, &doc, &fname, query_imports);
      print_any("  GetFunctionDoc", &doc);
      ((TVMFFIAny * (*)(MsvcModuleObj*, TVMFFIAny*, const TVMFFIAny*, bool))
           sym("?GetFunctionMetadata@ModuleObj@ffi@tvm@@QEAA?AV?$Optional@VString@ffi@tvm@@X@23@AEBVString@23@_N@Z"))(
          obj, &doc, &fname, query_imports);
      print_any("  GetFunctionMetadata", &doc);
      any_release(&fname);
    }
  }
  /* ImportModule and ClearImports, through the exported virtuals. */
  TVMFFIAny path2 = str_any(PLUGIN_PLAIN);
  TVMFFIObject* other = NULL;
  ((TVMFFIObject * *(*)(TVMFFIObject**, const TVMFFIAny*))
       sym("?LoadFromFile@Module@ffi@tvm@@SA?AV123@AEBVString@23@@Z"))(&other, &path2);
  any_release(&path2);
  size_t before = ((TVMFFISeqCell*)((char*)obj->imports + sizeof(TVMFFIObject)))->size;
  ((void (*)(MsvcModuleObj*, TVMFFIObject* const*))sym(
      "?ImportModule@ModuleObj@ffi@tvm@@UEAAXAEBVModule@23@@Z"))(obj, &other);
  size_t after = ((TVMFFISeqCell*)((char*)obj->imports + sizeof(TVMFFIObject)))->size;
  ((void (*)(MsvcModuleObj*))sym("?ClearImports@ModuleObj@ffi@tvm@@UEAAXXZ"))(obj);
  size_t cleared = ((TVMFFISeqCell*)((char*)obj->imports + sizeof(TVMFFIObject)))->size;
  printf("imports: %zu, after ImportModule %zu, after ClearImports %zu\n", before, after, cleared);
  TVMFFIObjectDecRef(other);
  TVMFFIObjectDecRef(mod);
}

/* ---- the free functions ------------------------------------------------ */

typedef bool (*Compare)(const TVMFFIAny*, const TVMFFIAny*);

static int visited;

/* The VisitContextSymbols callback: (name, address). */
static int count_symbol(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)result;
  if (num_args == 2) ++visited;
  return 0;
}

static void test_functions(void) {
  static const char* const kCompare[][2] = {
      {"RecursiveEq", "?RecursiveEq@ffi@tvm@@YA_NAEBVAny@12@0@Z"},
      {"RecursiveLt", "?RecursiveLt@ffi@tvm@@YA_NAEBVAny@12@0@Z"},
      {"RecursiveLe", "?RecursiveLe@ffi@tvm@@YA_NAEBVAny@12@0@Z"},
      {"RecursiveGt", "?RecursiveGt@ffi@tvm@@YA_NAEBVAny@12@0@Z"},
      {"RecursiveGe", "?RecursiveGe@ffi@tvm@@YA_NAEBVAny@12@0@Z"},
  };
  TVMFFIAny items[2] = {any_int(1), str_any("two")};
  TVMFFIAny a = call_global("ffi.Array", items, 2);
  TVMFFIAny items2[2] = {any_int(1), str_any("three")};
  TVMFFIAny b = call_global("ffi.Array", items2, 2);
  for (size_t i = 0; i < 5; ++i) {
    Compare f = (Compare)sym(kCompare[i][1]);
    printf("%s(a, b) %d, (b, a) %d, (a, a) %d\n", kCompare[i][0], f(&a, &b), f(&b, &a), f(&a, &a));
  }
  int64_t (*recursive_hash)(const TVMFFIAny*) =
      (int64_t (*)(const TVMFFIAny*))sym("?RecursiveHash@ffi@tvm@@YA_JAEBVAny@12@@Z");
  printf("RecursiveHash(a) %lld\n", (long long)recursive_hash(&a));
  TVMFFIAny out = any_none();
  ((AnyOut1)sym("?DeepCopy@ffi@tvm@@YA?AVAny@12@AEBV312@@Z"))(&out, &a);
  printf("DeepCopy(a): a new object %d, equal %d\n", out.v_obj != a.v_obj,
         ((Compare)sym(kCompare[0][1]))(&out, &a));
  any_release(&out);
  ((AnyOut1)sym("?ReprPrint@ffi@tvm@@YA?AVString@12@AEBVAny@12@@Z"))(&out, &a);
  print_any("ReprPrint(a)", &out);
  TVMFFIAny none = any_none();
  ((TVMFFIAny * (*)(TVMFFIAny*, const TVMFFIAny*, const TVMFFIAny*))
       sym("?ToJSONGraph@ffi@tvm@@YA?AVAny@12@AEBV312@0@Z"))(&out, &a, &none);
  TVMFFIAny graph = out;
  TVMFFIAny text = any_none();
  TVMFFIAny indent = any_none();
  ((TVMFFIAny * (*)(TVMFFIAny*, const TVMFFIAny*, const TVMFFIAny*))
       sym("?Stringify@json@ffi@tvm@@YA?AVString@23@AEBVAny@23@AEBV?$Optional@HX@23@@Z"))(&text, &graph, &indent);
  print_any("json::Stringify(ToJSONGraph(a))", &text);
  ((AnyOut1)sym("?FromJSONGraph@ffi@tvm@@YA?AVAny@12@AEBV312@@Z"))(&out, &graph);
  printf("FromJSONGraph(ToJSONGraph(a)) equals a: %d\n", ((Compare)sym(kCompare[0][1]))(&out, &a));
  any_release(&out);
  any_release(&graph);

  TVMFFIAny* (*parse)(TVMFFIAny*, const TVMFFIAny*, TVMFFIAny*) =
      (TVMFFIAny * (*)(TVMFFIAny*, const TVMFFIAny*, TVMFFIAny*))
          sym("?Parse@json@ffi@tvm@@YA?AVAny@23@AEBVString@23@PEAV523@@Z");
  static const char* const kJson[] = {"[1, 2.5, \"x\", null, {\"k\": true}]", "[1, 2", "{\"a\": }"};
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny src = str_any(kJson[i]), err = str_any("untouched");
    parse(&out, &src, &err);
    char label[96];
    snprintf(label, sizeof(label), "json::Parse(%s)", kJson[i]);
    print_any(label, &out);
    print_any("  error slot", &err);
    any_release(&src);
  }

  bool (*equal)(const TVMFFIAny*, const TVMFFIAny*, bool, bool) =
      (bool (*)(const TVMFFIAny*, const TVMFFIAny*, bool, bool))sym(
          "?Equal@StructuralEqual@ffi@tvm@@SA_NAEBVAny@23@0_N1@Z");
  printf("StructuralEqual::Equal(a, b) %d, (a, a) %d\n", equal(&a, &b, false, false),
         equal(&a, &a, false, false));
  TVMFFIObject* mismatch = NULL;
  TVMFFIObject** (*first_mismatch)(TVMFFIObject**, const TVMFFIAny*, const TVMFFIAny*, bool, bool) =
      (TVMFFIObject * *(*)(TVMFFIObject**, const TVMFFIAny*, const TVMFFIAny*, bool, bool))
          sym("?GetFirstMismatch@StructuralEqual@ffi@tvm@@SA?AV?$Optional@V?$Tuple@VAccessPath@reflection@ffi@tvm@@V1234@@ffi@tvm@@X@23@AEBVAny@23@0_N1@Z");
  first_mismatch(&mismatch, &a, &b, false, false);
  if (mismatch != NULL) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(mismatch->type_index);
    printf("GetFirstMismatch(a, b): %.*s\n", (int)info->type_key.size, info->type_key.data);
    TVMFFIObjectDecRef(mismatch);
  }
  first_mismatch(&mismatch, &a, &a, false, false);
  printf("GetFirstMismatch(a, a): none %d\n", mismatch == NULL);
  uint64_t (*shash)(const TVMFFIAny*, bool, bool) =
      (uint64_t (*)(const TVMFFIAny*, bool, bool))sym("?Hash@StructuralHash@ffi@tvm@@SA_KAEBVAny@23@_N1@Z");
  uint64_t hash = shash(&a, false, false);
  printf("StructuralHash::Hash(a) %llu, the same with map_free_vars %d\n", (unsigned long long)hash,
         hash == shash(&a, true, false));

  /* VisitContextSymbols: a callback through TypedFunction<void(String, void*)>. */
  TVMFFIObject* callback = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, count_symbol, NULL, (TVMFFIObjectHandle*)&callback));
  ((void (*)(TVMFFIObject* const*))sym(
      "?VisitContextSymbols@Module@ffi@tvm@@SAXAEBV?$TypedFunction@$$A6AXVString@ffi@tvm@@PEAX@Z@23@@Z"))(&callback);
  printf("VisitContextSymbols: called back %s\n", visited > 0 ? "at least once" : "never");
  TVMFFIObjectDecRef(callback);
  any_release(&a);
  any_release(&b);
  any_release(&items[1]);
  any_release(&items2[1]);
}

int main(void) {
  HMODULE ucrt = LoadLibraryA("ucrtbase.dll");
  ucrt_malloc = (void* (*)(size_t))(void*)GetProcAddress(ucrt, "malloc");
  ucrt_free = (void (*)(void*))(void*)GetProcAddress(ucrt, "free");
  dll = GetModuleHandleA("tvm_ffi.dll");
  CHECK(dll != NULL && ucrt_malloc != NULL && ucrt_free != NULL);
  test_error();
  test_module();
  test_functions();
  printf("done\n");
  return 0;
}
