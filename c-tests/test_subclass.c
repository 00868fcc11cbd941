/* Subclasses defined from C through the type registration API, objects laid
 * out by hand (the parent's layout, then the subclass's own fields), passed
 * to every kind of receiver that accepts their parent. The reference checks
 * types by ancestry (IsObjectInstance), so a receiver that takes an
 * ffi.StructuralVisitor, ffi.StructuralMutator or a reflected base type
 * takes its subclasses too. (The built-in depth-1 types, ffi.Function,
 * ffi.Error, the containers, ..., refuse subclasses at registration: the
 * reference exits the process there, ours raises, see test_boundary.c.)
 * The transcript shows what a caller sees of each, on both libraries. */
#include "common.h"

#include <stdint.h>

static int32_t index_of(const char* key) {
  TVMFFIByteArray k = byte_array(key);
  int32_t index = -1;
  CHECK_OK(TVMFFITypeKeyToIndex(&k, &index));
  return index;
}

/* Registers `key` as a child of `parent`; prints its ancestry. */
static int32_t subclass(const char* key, int32_t parent) {
  TVMFFIByteArray k = byte_array(key);
  int32_t depth = TVMFFIGetTypeInfo(parent)->type_depth + 1;
  int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, depth, 0, 1, parent);
  CHECK(index >= kTVMFFIDynObjectBegin);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  printf("%s: depth %d, ancestors", key, info->type_depth);
  for (int d = 0; d < info->type_depth; ++d) {
    printf(" %.*s", (int)info->type_ancestors[d]->type_key.size,
           info->type_ancestors[d]->type_key.data);
  }
  printf("\n");
  return index;
}

static const char* key_of(int32_t type_index) {
  static char text[128];
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  snprintf(text, sizeof(text), "%.*s", (int)info->type_key.size, info->type_key.data);
  return text;
}

static void free_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* A zeroed object of `size` bytes with one strong reference. */
static void* new_object(int32_t type_index, size_t size) {
  TVMFFIObject* obj = (TVMFFIObject*)calloc(1, size);
  CHECK(obj != NULL);
  obj->combined_ref_count = 1 | ((uint64_t)1 << 32);
  obj->type_index = type_index;
  obj->deleter = free_deleter;
  return obj;
}

static TVMFFIAny any_obj(void* obj) {
  TVMFFIAny a = any_none();
  a.type_index = ((TVMFFIObject*)obj)->type_index;
  a.v_obj = (TVMFFIObject*)obj;
  return a;
}

/* ffi.ReprPrint of a value, as text. */
static void show(const char* label, TVMFFIAny value) {
  TVMFFIAny text = call_global("ffi.ReprPrint", &value, 1);
  TVMFFIByteArray b = any_text(&text);
  printf("%s: %s %.*s\n", label, key_of(value.type_index), (int)b.size, b.data);
  any_release(&text);
}

/* Calls global `name`; prints the result or the raised error. */
static TVMFFIAny try_global(const char* label, const char* name, TVMFFIAny* args, int n) {
  TVMFFIObjectHandle f = get_global(name);
  TVMFFIAny r = any_none();
  int rc = TVMFFIFunctionCall(f, args, n, &r);
  TVMFFIObjectDecRef(f);
  if (rc != 0) {
    char* text = take_error_kind();
    printf("%s: rc %d raises %s\n", label, rc, text);
    free(text);
  } else if (r.type_index == kTVMFFIInt || r.type_index == kTVMFFIBool) {
    printf("%s: %s %lld\n", label, key_of(r.type_index), (long long)r.v_int64);
  } else if (r.type_index == kTVMFFINone) {
    printf("%s: None\n", label);
  } else {
    show(label, r);
  }
  return r;
}

static TVMFFIAny array_of(TVMFFIAny* items, int n) { return call_global("ffi.Array", items, n); }

/* A callback counting its calls (`self` points to the counter). */
static int count_calls(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n;
  *(int64_t*)self += 1;
  *result = any_none();
  return 0;
}

/* A callback answering the type key of its argument. */
static int describe(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  char text[160];
  snprintf(text, sizeof(text), "saw %s", n > 0 ? key_of(args[0].type_index) : "nothing");
  *result = any_str(text);
  return 0;
}

/* ---- Reflected Base (field a) and Derived (field b). */
typedef struct {
  TVMFFIObject header;
  int64_t a;
  int64_t b;
} Derived;

static int get_int(void* field, TVMFFIAny* result) {
  *result = any_int(*(int64_t*)field);
  return 0;
}

static void add_int_field(int32_t type_index, const char* name, int64_t offset) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof(f));
  f.name = byte_array(name);
  f.size = 8;
  f.alignment = 8;
  f.offset = offset;
  f.getter = get_int;
  f.default_value_or_factory = any_none();
  f.field_static_type_index = kTVMFFIInt;
  CHECK_OK(TVMFFITypeRegisterField(type_index, &f));
}

static void add_metadata(int32_t type_index, int32_t size) {
  TVMFFITypeMetadata m;
  memset(&m, 0, sizeof(m));
  m.total_size = size;
  m.structural_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  CHECK_OK(TVMFFITypeRegisterMetadata(type_index, &m));
}

/* ---- Visitor and mutator subclasses: the C++ StructuralVisitorObj /
 * StructuralMutatorObj layout (vtable, def region), then their own state. */
typedef TVMFFIAny (*VisitFn)(void* visitor, TVMFFIAny value);
typedef TVMFFIAny (*RemapSetFn)(void* mutator, TVMFFIAny var, TVMFFIAny value);
typedef struct {
  VisitFn visit;
} VisitorVTable;
typedef struct {
  VisitFn mutate;
  VisitFn maybe_inplace_mutate;
  VisitFn var_remap_get;
  RemapSetFn var_remap_set;
} MutatorVTable;
typedef struct {
  TVMFFIObject header;
  const void* vtable;
  int32_t def_region;
  int64_t ints_seen;
} Traversal;

/* global(traversal, value) as a vtable entry answers: the result, or the
 * raised Error as the value. */
static TVMFFIAny call_default(const char* global, Traversal* self, TVMFFIAny value) {
  TVMFFIAny args[2] = {any_obj(self), value};
  TVMFFIObjectHandle f = get_global(global);
  TVMFFIAny r = any_none();
  int rc = TVMFFIFunctionCall(f, args, 2, &r);
  TVMFFIObjectDecRef(f);
  if (rc != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    r.type_index = kTVMFFIError;
    r.v_obj = (TVMFFIObject*)err;
  }
  return r;
}

/* Counts integers; recurses into everything else by the default visit. */
static TVMFFIAny counting_visit(void* visitor, TVMFFIAny value) {
  Traversal* self = (Traversal*)visitor;
  if (value.type_index == kTVMFFIInt) {
    self->ints_seen += 1;
    return any_none();
  }
  return call_default("ffi.StructuralVisitorDefaultVisit", self, value);
}
static const VisitorVTable counting_vtable = {counting_visit};

/* Adds 100 to integers; mutates everything else by the default. */
static TVMFFIAny adding_mutate(void* mutator, TVMFFIAny value) {
  Traversal* self = (Traversal*)mutator;
  if (value.type_index == kTVMFFIInt) {
    self->ints_seen += 1;
    return any_int(value.v_int64 + 100);
  }
  return call_default("ffi.StructuralMutatorDefaultMutate", self, value);
}
static TVMFFIAny no_remap(void* mutator, TVMFFIAny var) {
  (void)mutator; (void)var;
  return any_none();
}
static TVMFFIAny refuse_remap(void* mutator, TVMFFIAny var, TVMFFIAny value) {
  (void)mutator; (void)var; (void)value;
  TVMFFIObjectHandle err = NULL;
  TVMFFIByteArray kind = byte_array("ValueError"), msg = byte_array("this mutator keeps no remap");
  TVMFFIByteArray bt = byte_array("");
  CHECK_OK(TVMFFIErrorCreate(&kind, &msg, &bt, &err));
  TVMFFIAny r = any_none();
  r.type_index = kTVMFFIError;
  r.v_obj = (TVMFFIObject*)err;
  return r;
}
static const MutatorVTable adding_vtable = {adding_mutate, adding_mutate, no_remap, refuse_remap};

/* A callback reporting the def region its traversal is in. */
static int report_region(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n;
  *result = any_str((const char*)self);
  return 0;
}

int main(void) {
  int32_t base = subclass("c_sub.Base", kTVMFFIObject);
  int32_t derived = subclass("c_sub.Derived", base);
  int32_t visitor_sub = subclass("c_sub.CountingVisitor", index_of("ffi.StructuralVisitor"));
  int32_t mutator_sub = subclass("c_sub.AddingMutator", index_of("ffi.StructuralMutator"));
  static int64_t calls = 0;
  TVMFFIObjectHandle counter = NULL, describer = NULL;
  CHECK_OK(TVMFFIFunctionCreate(&calls, count_calls, NULL, &counter));
  CHECK_OK(TVMFFIFunctionCreate(NULL, describe, NULL, &describer));

  /* A reflected Derived: its base's field and its own, read by the
   * reflection-driven algorithms; callbacks keyed by the base type run on it. */
  add_int_field(base, "a", 24);
  add_metadata(base, 32);
  add_int_field(derived, "b", 32);
  add_metadata(derived, sizeof(Derived));
  {
    Derived* d1 = (Derived*)new_object(derived, sizeof(Derived));
    Derived* d2 = (Derived*)new_object(derived, sizeof(Derived));
    d1->a = d2->a = 7;
    d1->b = d2->b = 8;
    show("ReprPrint(Derived)", any_obj(d1));
    TVMFFIAny pair_args[4] = {any_obj(d1), any_obj(d2), any_int(0), any_int(0)};
    pair_args[2].type_index = pair_args[3].type_index = kTVMFFIBool;
    TVMFFIAny hash_args[3] = {any_obj(d1), pair_args[2], pair_args[3]};
    try_global("StructuralEqual(Derived, Derived)", "ffi.StructuralEqual", pair_args, 4);
    try_global("RecursiveEq(Derived, Derived)", "ffi.RecursiveEq", pair_args, 2);
    TVMFFIAny h1 = call_global("ffi.StructuralHash", hash_args, 3);
    d2->b = 9;
    try_global("StructuralEqual after b changes", "ffi.StructuralEqual", pair_args, 4);
    try_global("RecursiveEq after b changes", "ffi.RecursiveEq", pair_args, 2);
    hash_args[0] = any_obj(d2);
    TVMFFIAny h2 = call_global("ffi.StructuralHash", hash_args, 3);
    printf("hashes differ after b changes: %d\n", h1.v_int64 != h2.v_int64);

    /* Walk callbacks keyed by c_sub.Base see the Derived objects. */
    TVMFFIAny pair[2] = {any_int(base), any_obj(counter)};
    TVMFFIAny entry = array_of(pair, 2);
    TVMFFIAny callbacks = array_of(&entry, 1);
    TVMFFIAny none_list = array_of(NULL, 0);
    TVMFFIAny root = array_of(pair_args, 2);
    TVMFFIAny walk_args[4] = {root, callbacks, none_list, any_int(0)};
    TVMFFIAny walked = try_global("StructuralWalk(callback keyed by c_sub.Base)",
                                  "ffi.StructuralWalk", walk_args, 4);
    any_release(&walked);
    printf("callback calls: %lld\n", (long long)calls);
    pair[1] = any_obj(describer);
    TVMFFIAny entry2 = array_of(pair, 2);
    TVMFFIAny callbacks2 = array_of(&entry2, 1);
    TVMFFIAny map_args[4] = {root, callbacks2, none_list, any_int(0)};
    TVMFFIAny mapped = try_global("StructuralMap(callback keyed by c_sub.Base)", "ffi.StructuralMap",
                                  map_args, 4);
    any_release(&mapped);
    any_release(&entry);
    any_release(&callbacks);
    any_release(&entry2);
    any_release(&callbacks2);
    any_release(&none_list);
    any_release(&root);
    TVMFFIObjectDecRef(d1);
    TVMFFIObjectDecRef(d2);
  }

  /* Visitor and mutator subclasses, to every visitor/mutator method. */
  {
    Traversal* v = (Traversal*)new_object(visitor_sub, sizeof(Traversal));
    v->vtable = &counting_vtable;
    TVMFFIAny inner_items[2] = {any_int(2), any_int(3)};
    TVMFFIAny inner = array_of(inner_items, 2);
    TVMFFIAny items[3] = {any_int(1), inner, any_str("s")};
    TVMFFIAny root = array_of(items, 3);
    TVMFFIAny args[3] = {any_obj(v), root, any_none()};
    TVMFFIAny r = try_global("StructuralVisitorVisit(CountingVisitor)", "ffi.StructuralVisitorVisit",
                             args, 2);
    any_release(&r);
    printf("ints seen: %lld\n", (long long)v->ints_seen);
    r = try_global("StructuralVisitorDefaultVisit(CountingVisitor)",
                   "ffi.StructuralVisitorDefaultVisit", args, 2);
    any_release(&r);
    printf("ints seen: %lld\n", (long long)v->ints_seen);
    r = try_global("StructuralVisitorDefRegionKind(CountingVisitor)",
                   "ffi.StructuralVisitorDefRegionKind", args, 1);
    TVMFFIObjectHandle cb = NULL;
    CHECK_OK(TVMFFIFunctionCreate((void*)"in region", report_region, NULL, &cb));
    TVMFFIAny region_args[3] = {any_obj(v), any_int(1), any_obj(cb)};
    r = try_global("StructuralVisitorWithDefRegionKind(CountingVisitor)",
                   "ffi.StructuralVisitorWithDefRegionKind", region_args, 3);
    any_release(&r);

    Traversal* m = (Traversal*)new_object(mutator_sub, sizeof(Traversal));
    m->vtable = &adding_vtable;
    TVMFFIAny margs[3] = {any_obj(m), root, any_none()};
    r = try_global("StructuralMutatorMutate(AddingMutator)", "ffi.StructuralMutatorMutate", margs, 2);
    any_release(&r);
    r = try_global("StructuralMutatorDefaultMutate(AddingMutator)",
                   "ffi.StructuralMutatorDefaultMutate", margs, 2);
    any_release(&r);
    printf("ints seen: %lld\n", (long long)m->ints_seen);
    margs[1] = any_obj(counter);
    r = try_global("StructuralMutatorVarRemapGet(AddingMutator)", "ffi.StructuralMutatorVarRemapGet",
                   margs, 2);
    margs[2] = any_int(1);
    r = try_global("StructuralMutatorVarRemapSet(AddingMutator)", "ffi.StructuralMutatorVarRemapSet",
                   margs, 3);
    r = try_global("StructuralMutatorDefRegionKind(AddingMutator)",
                   "ffi.StructuralMutatorDefRegionKind", margs, 1);
    region_args[0] = any_obj(m);
    r = try_global("StructuralMutatorWithDefRegionKind(AddingMutator)",
                   "ffi.StructuralMutatorWithDefRegionKind", region_args, 3);
    any_release(&r);
    /* A subclass visitor where a mutator is expected, and the reverse. */
    margs[0] = any_obj(v);
    margs[1] = root;
    r = try_global("StructuralMutatorMutate(CountingVisitor)", "ffi.StructuralMutatorMutate", margs, 2);
    args[0] = any_obj(m);
    r = try_global("StructuralVisitorVisit(AddingMutator)", "ffi.StructuralVisitorVisit", args, 2);
    TVMFFIObjectDecRef(cb);
    any_release(&inner);
    any_release(&root);
    TVMFFIObjectDecRef(v);
    TVMFFIObjectDecRef(m);
  }
  TVMFFIObjectDecRef(counter);
  TVMFFIObjectDecRef(describer);
  return 0;
}
