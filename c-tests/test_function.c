/* Functions: creation, deleters, the call convention, owned conversion. */
#include "common.h"

static int deleted = 0;
static void count_delete(void* self) { deleted += *(int*)self; }

/* Sums int arguments; echoes raw strings by their length; fails on None. */
static int sum_args(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  int64_t total = self ? *(int*)self : 0;
  for (int i = 0; i < n; ++i) {
    if (args[i].type_index == kTVMFFIInt) {
      total += args[i].v_int64;
    } else if (args[i].type_index == kTVMFFIRawStr) {
      total += (int64_t)strlen(args[i].v_c_str);
    } else {
      TVMFFIErrorSetRaisedFromCStr("TypeError", "sum_args takes ints and raw strings");
      return -1;
    }
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = total;
  return 0;
}

static void* seen_handle = NULL;
static int record_handle(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args; (void)n;
  seen_handle = self;
  *result = any_none();
  return 0;
}

int main(void) {
  int self_value = 100;
  TVMFFIObjectHandle f = NULL;
  CHECK_OK(TVMFFIFunctionCreate(&self_value, sum_args, count_delete, &f));
  printf("function type_index %d cpp_call %s\n", ((TVMFFIObject*)f)->type_index,
         ((TVMFFIFunctionCell*)((char*)f + sizeof(TVMFFIObject)))->cpp_call ? "set" : "NULL");

  TVMFFIAny args[3] = {any_int(1), any_int(2), any_none()};
  args[2].type_index = kTVMFFIRawStr;
  args[2].v_c_str = "four";
  for (int n = 0; n <= 3; ++n) {
    TVMFFIAny result = any_none();
    CHECK_OK(TVMFFIFunctionCall(f, args, n, &result));
    printf("call with %d args -> %lld\n", n, (long long)result.v_int64);
  }
  TVMFFIAny bad = any_none();
  TVMFFIAny result = any_none();
  EXPECT_RAISES("call with None", TVMFFIFunctionCall(f, &bad, 1, &result));

  /* The deleter runs exactly once, when the last reference goes. */
  CHECK_OK(TVMFFIObjectIncRef(f));
  CHECK_OK(TVMFFIObjectDecRef(f));
  CHECK(deleted == 0);
  CHECK_OK(TVMFFIObjectDecRef(f));
  printf("deleter ran %d time(s)\n", deleted / 100);

  /* NULL self and NULL deleter: the callee receives the function object. */
  CHECK_OK(TVMFFIFunctionCreate(NULL, record_handle, NULL, &f));
  CHECK_OK(TVMFFIFunctionCall(f, NULL, 0, &result));
  printf("NULL-self function receives itself: %s\n", seen_handle == f ? "yes" : "no");
  TVMFFIObjectDecRef(f);
  /* NULL self with a deleter: the callee receives NULL. */
  CHECK_OK(TVMFFIFunctionCreate(NULL, record_handle, (void (*)(void*))free, &f));
  CHECK_OK(TVMFFIFunctionCall(f, NULL, 0, &result));
  printf("NULL self with deleter receives: %s\n", seen_handle == NULL ? "NULL" : "other");
  TVMFFIObjectDecRef(f);

  /* AnyViewToOwnedAny. */
  TVMFFIAny view = any_none(), owned = any_none();
  view.type_index = kTVMFFIRawStr;
  view.v_c_str = "converted to a String object";
  CHECK_OK(TVMFFIAnyViewToOwnedAny(&view, &owned));
  printf("raw str -> type_index %d\n", owned.type_index);
  TVMFFIAny str = owned;
  TVMFFIByteArray arr = byte_array("tiny");
  view.type_index = kTVMFFIByteArrayPtr;
  view.v_ptr = &arr;
  CHECK_OK(TVMFFIAnyViewToOwnedAny(&view, &owned));
  printf("byte array ptr -> type_index %d\n", owned.type_index);
  view = str;
  CHECK_OK(TVMFFIAnyViewToOwnedAny(&view, &owned));
  printf("object -> same object %s, ref_count %#llx\n", owned.v_obj == str.v_obj ? "yes" : "no",
         (unsigned long long)str.v_obj->combined_ref_count);
  any_release(&owned);
  /* An r-value reference is moved from. */
  TVMFFIObject* slot = str.v_obj;
  view.type_index = kTVMFFIObjectRValueRef;
  view.v_ptr = &slot;
  CHECK_OK(TVMFFIAnyViewToOwnedAny(&view, &owned));
  printf("rvalue ref -> type_index %d, slot now %s, ref_count %#llx\n", owned.type_index,
         slot == NULL ? "NULL" : "set", (unsigned long long)owned.v_obj->combined_ref_count);
  any_release(&owned);
  view = any_int(-5);
  CHECK_OK(TVMFFIAnyViewToOwnedAny(&view, &owned));
  printf("int -> %lld\n", (long long)owned.v_int64);
  return 0;
}
