/* Callbacks may change what is being walked: a structural walk, visit,
 * map, mutate, equality or hash whose callback clears and refills the List
 * being traversed reads no freed memory (the traversal holds what it
 * iterates). Run under AddressSanitizer and valgrind by the test command.
 * The reference iterates the List's storage in place, so this runs on ours
 * only. */
#include "common.h"

static TVMFFIAny the_list;

/* Clears the List and refills it with heap strings, then answers None. */
static int clear_and_refill(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self; (void)args; (void)n;
  TVMFFIAny r = call_global("ffi.ListClear", &the_list, 1);
  any_release(&r);
  for (int i = 0; i < 20; ++i) {
    TVMFFIAny item[2] = {the_list, any_str("a string far longer than seven bytes")};
    r = call_global("ffi.ListAppend", item, 2);
    any_release(&item[1]);
    any_release(&r);
  }
  *result = any_none();
  return 0;
}

/* Same, then answers its argument (for map and mutate). */
static int clear_and_keep(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  clear_and_refill(self, args, n, result);
  return TVMFFIAnyViewToOwnedAny(&args[0], result);
}

/* [(int, f)], or [(int, f, false)] for ffi.StructuralMutate. */
static TVMFFIAny callbacks_for(TVMFFIObjectHandle f, int with_flag) {
  TVMFFIAny pair[3] = {any_int(kTVMFFIInt), any_none(), any_none()};
  pair[1].type_index = kTVMFFIFunction;
  pair[1].v_obj = (TVMFFIObject*)f;
  pair[2].type_index = kTVMFFIBool;
  TVMFFIAny entry = call_global("ffi.Array", pair, with_flag ? 3 : 2);
  TVMFFIAny list = call_global("ffi.Array", &entry, 1);
  any_release(&entry);
  return list;
}

static void fill(void) {
  TVMFFIAny r = call_global("ffi.ListClear", &the_list, 1);
  any_release(&r);
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny item[2] = {the_list, any_int(i)};
    r = call_global("ffi.ListAppend", item, 2);
    any_release(&r);
  }
}

int main(void) {
  the_list = call_global("ffi.List", NULL, 0);
  TVMFFIObjectHandle refill = NULL, keep = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, clear_and_refill, NULL, &refill));
  CHECK_OK(TVMFFIFunctionCreate(NULL, clear_and_keep, NULL, &keep));
  TVMFFIAny none_list = call_global("ffi.Array", NULL, 0);
  const char* engines[] = {"ffi.StructuralWalk", "ffi.StructuralMap", "ffi.StructuralVisit",
                           "ffi.StructuralMutate"};
  for (int e = 0; e < 4; ++e) {
    fill();
    TVMFFIAny root = call_global("ffi.Array", &the_list, 1);
    TVMFFIAny callbacks = callbacks_for(e % 2 == 0 ? refill : keep, e == 3);
    TVMFFIAny args[4] = {root, callbacks, none_list, any_int(0)};
    int n = (e >= 2) ? 2 : 4;
    TVMFFIObjectHandle f = get_global(engines[e]);
    TVMFFIAny r = any_none();
    int rc = TVMFFIFunctionCall(f, args, n, &r);
    TVMFFIObjectDecRef(f);
    if (rc != 0) {
      char* text = take_error_kind();
      printf("%s: rc %d %s\n", engines[e], rc, text);
      free(text);
    } else {
      printf("%s: returned type %d\n", engines[e], r.type_index);
    }
    any_release(&r);
    any_release(&callbacks);
    any_release(&root);
  }
  TVMFFIAny size = call_global("ffi.ListSize", &the_list, 1);
  printf("list size after the callbacks: %lld\n", (long long)size.v_int64);
  any_release(&none_list);
  any_release(&the_list);
  TVMFFIObjectDecRef(refill);
  TVMFFIObjectDecRef(keep);
  return 0;
}
