/* Arrays, Lists, Maps and Dicts through the built-in globals, and the raw
 * map memory (layout tag, sizes, Fibonacci shift, every slot's metadata
 * byte), which must be bit-identical to the official library's. */
#include "common.h"

static void expect_error(const char* label, const char* name, TVMFFIAny* args, int n) {
  TVMFFIObjectHandle f = get_global(name);
  TVMFFIAny r = any_none();
  EXPECT_RAISES(label, TVMFFIFunctionCall(f, args, n, &r));
  TVMFFIObjectDecRef(f);
}

static TVMFFIAny obj(TVMFFIAny a) {
  TVMFFIAny v = any_none();
  v.type_index = a.type_index;
  v.v_obj = a.v_obj;
  return v;
}

static void print_value(TVMFFIAny v) {
  if (v.type_index == kTVMFFIInt) {
    printf("%lld", (long long)v.v_int64);
  } else if (v.type_index == kTVMFFIBool) {
    printf("%s", v.v_int64 ? "true" : "false");
  } else if (v.type_index == kTVMFFINone) {
    printf("None");
  } else {
    TVMFFIByteArray t = any_text(&v);
    if (t.data) printf("'%.*s'", (int)t.size, t.data); else printf("<type %d>", v.type_index);
  }
}

static void print_seq(const char* label, TVMFFIAny seq) {
  const TVMFFISeqCell* cell = (const TVMFFISeqCell*)((char*)seq.v_obj + sizeof(TVMFFIObject));
  printf("%s: type %d size %lld [", label, seq.type_index, (long long)cell->size);
  for (int64_t i = 0; i < cell->size; ++i) {
    if (i) printf(", ");
    print_value(((TVMFFIAny*)cell->data)[i]);
  }
  printf("]\n");
}

/* The raw map state after the header. */
typedef struct {
  void* data;
  uint64_t size;
  uint64_t slots;
  void (*data_deleter)(void*);
  uint32_t fib_shift;
  uint64_t head;
  uint64_t tail;
} MapState;

static void print_map(const char* label, TVMFFIAny m) {
  const MapState* s = (const MapState*)((char*)m.v_obj + sizeof(TVMFFIObject));
  int small = (s->slots >> 63) != 0;
  printf("%s: type %d size %llu %s slots %llu", label, m.type_index, (unsigned long long)s->size,
         small ? "small" : "dense", (unsigned long long)(s->slots & ~(1ULL << 63)));
  if (!small) {
    printf(" fib_shift %u head %llu tail %llu\n  meta:", s->fib_shift, (unsigned long long)s->head,
           (unsigned long long)s->tail);
    for (uint64_t i = 0; i < s->slots; ++i) {
      const uint8_t* block = (const uint8_t*)s->data + (i / 16) * (16 + 16 * 48);
      printf(" %02x", block[i % 16]);
    }
  }
  /* Iteration order through the functor. */
  TVMFFIAny arg = obj(m);
  TVMFFIAny it = call_global(m.type_index == kTVMFFIMap ? "ffi.MapForwardIterFunctor" : "ffi.DictForwardIterFunctor", &arg, 1);
  printf("\n  items:");
  for (uint64_t i = 0; i < s->size; ++i) {
    TVMFFIAny c = any_int(0);
    TVMFFIAny k = any_none(), v = any_none();
    CHECK_OK(TVMFFIFunctionCall(it.v_obj, &c, 1, &k));
    c = any_int(1);
    CHECK_OK(TVMFFIFunctionCall(it.v_obj, &c, 1, &v));
    printf(" ");
    print_value(k);
    printf("=");
    print_value(v);
    any_release(&k);
    any_release(&v);
    c = any_int(2);
    TVMFFIAny more = any_none();
    CHECK_OK(TVMFFIFunctionCall(it.v_obj, &c, 1, &more));
  }
  printf("\n");
  any_release(&it);
}

static int64_t get_int(const char* name, TVMFFIAny* args, int n) {
  TVMFFIAny r = call_global(name, args, n);
  return r.v_int64;
}

int main(void) {
  /* Arrays. */
  TVMFFIAny elems[4] = {any_int(1), any_str("two"), any_str("a long string element"), any_none()};
  TVMFFIAny arr = call_global("ffi.Array", elems, 4);
  print_seq("array", arr);
  TVMFFIAny a2[2] = {obj(arr), any_int(2)};
  TVMFFIAny item = call_global("ffi.ArrayGetItem", a2, 2);
  printf("array[2] = ");
  print_value(item);
  printf("\n");
  any_release(&item);
  printf("array size %lld\n", (long long)get_int("ffi.ArraySize", a2, 1));
  a2[1] = any_str("two");
  printf("array contains 'two' %lld\n", (long long)get_int("ffi.ArrayContains", a2, 2));
  any_release(&a2[1]);
  a2[1] = any_int(7);
  expect_error("array index 7", "ffi.ArrayGetItem", a2, 2);
  a2[1] = any_int(-1);
  expect_error("array index -1", "ffi.ArrayGetItem", a2, 2);
  TVMFFIAny empty = call_global("ffi.Array", NULL, 0);
  print_seq("empty array", empty);
  any_release(&empty);

  /* Lists. */
  TVMFFIAny list = call_global("ffi.List", elems, 2);
  TVMFFIAny l3[3] = {obj(list), any_int(10), any_none()};
  call_global("ffi.ListAppend", l3, 2);
  l3[1] = any_int(0);
  l3[2] = any_int(99);
  call_global("ffi.ListInsert", l3, 3);
  print_seq("list after append/insert", list);
  /* Insert positions run from 0 to the size, both included. */
  for (int k = 0; k < 3; ++k) {
    const int64_t bad[3] = {10, -1, 5};
    TVMFFIAny ins[3] = {obj(list), any_int(bad[k]), any_int(7)};
    char label[64];
    snprintf(label, sizeof(label), "ListInsert at %lld", (long long)bad[k]);
    expect_error(label, "ffi.ListInsert", ins, 3);
  }
  l3[1] = any_int(1);
  l3[2] = any_str("replaced");
  call_global("ffi.ListSetItem", l3, 3);
  any_release(&l3[2]);
  l3[1] = any_int(0);
  TVMFFIAny popped = call_global("ffi.ListPop", l3, 2);
  printf("popped ");
  print_value(popped);
  printf("\n");
  print_seq("list", list);
  for (int i = 0; i < 6; ++i) {
    l3[1] = any_int(100 + i);
    call_global("ffi.ListAppend", l3, 2);
  }
  l3[1] = any_int(2);
  l3[2] = any_int(5);
  call_global("ffi.ListEraseRange", l3, 3);
  l3[1] = any_int(0);
  call_global("ffi.ListErase", l3, 2);
  print_seq("list after erase", list);
  TVMFFIAny rep_elems[2] = {any_int(-1), any_int(-2)};
  TVMFFIAny rep = call_global("ffi.List", rep_elems, 2);
  TVMFFIAny l4[4] = {obj(list), any_int(1), any_int(3), obj(rep)};
  call_global("ffi.ListReplaceSlice", l4, 4);
  print_seq("list after replace slice", list);
  l4[3] = obj(list);
  l4[1] = any_int(0);
  l4[2] = any_int(1);
  call_global("ffi.ListReplaceSlice", l4, 4);
  print_seq("list after replacing with itself", list);
  call_global("ffi.ListReverse", l3, 1);
  print_seq("reversed", list);
  printf("list size %lld contains 103 %lld\n", (long long)get_int("ffi.ListSize", l3, 1),
         (long long)(l3[1] = any_int(103), get_int("ffi.ListContains", l3, 2)));
  l3[1] = any_int(50);
  expect_error("list get 50", "ffi.ListGetItem", l3, 2);
  expect_error("list pop 50", "ffi.ListPop", l3, 2);
  l3[2] = any_int(1);
  expect_error("list set 50", "ffi.ListSetItem", l3, 3);
  l3[1] = any_int(3);
  l3[2] = any_int(1);
  expect_error("list erase range 3..1", "ffi.ListEraseRange", l3, 3);
  call_global("ffi.ListClear", l3, 1);
  print_seq("cleared", list);
  /* A List parameter takes an Array as a copy: the Array is unchanged. */
  l3[0] = obj(arr);
  l3[1] = any_int(5);
  call_global("ffi.ListAppend", l3, 2);
  print_seq("array after ListAppend on it", arr);
  any_release(&rep);
  any_release(&list);

  /* Maps: small, growing to dense, string/int/None keys. */
  TVMFFIAny kv[8] = {any_str("a"), any_int(1), any_int(2), any_str("two"), any_none(), any_int(0),
                     any_str("a key longer than seven"), any_int(4)};
  TVMFFIAny m = call_global("ffi.Map", kv, 8);
  print_map("map of 4", m);
  TVMFFIAny q[2] = {obj(m), any_str("a key longer than seven")};
  TVMFFIAny got = call_global("ffi.MapGetItem", q, 2);
  printf("map[long key] = ");
  print_value(got);
  printf(" count %lld\n", (long long)get_int("ffi.MapCount", q, 2));
  any_release(&q[1]);
  q[1] = any_none();
  q[1].type_index = kTVMFFIRawStr;
  q[1].v_c_str = "a";
  printf("map[raw 'a'] = %lld\n", (long long)get_int("ffi.MapGetItem", q, 2));
  q[1] = any_int(12345);
  expect_error("map missing key", "ffi.MapGetItem", q, 2);
  TVMFFIAny missing = call_global("ffi.MapGetItemOrMissing", q, 2);
  TVMFFIAny invalid = call_global("ffi.GetInvalidObject", NULL, 0);
  printf("missing is the invalid object %d\n", missing.v_obj == invalid.v_obj);
  any_release(&missing);
  any_release(&invalid);
  any_release(&m);
  for (int i = 0; i < 8; ++i) any_release(&kv[i]);

  TVMFFIAny big[80];
  for (int i = 0; i < 40; ++i) {
    char key[32];
    snprintf(key, sizeof(key), i % 3 ? "key-%d" : "k%d", i);
    big[2 * i] = i % 4 == 0 ? any_int(i * 1000003) : any_str(key);
    big[2 * i + 1] = any_int(i);
  }
  for (int n = 5; n <= 40; n += 7) {
    char label[32];
    snprintf(label, sizeof(label), "map of %d", n);
    TVMFFIAny dm = call_global("ffi.Map", big, 2 * n);
    print_map(label, dm);
    any_release(&dm);
  }
  /* Setting an existing key again (the same key twice in the arguments). */
  TVMFFIAny dup[12];
  for (int i = 0; i < 10; ++i) dup[i] = big[i];
  dup[10] = big[2];
  dup[11] = any_int(-7);
  TVMFFIAny dm = call_global("ffi.Map", dup, 12);
  print_map("map with a repeated key", dm);
  any_release(&dm);
  TVMFFIAny odd = any_int(1);
  {
    /* Ours names the problem where the reference fails a bare check. */
    TVMFFIObjectHandle f = get_global("ffi.Map");
    TVMFFIAny r = any_none();
    EXPECT_RAISES_KIND("map with an odd argument count", TVMFFIFunctionCall(f, &odd, 1, &r));
    TVMFFIObjectDecRef(f);
  }

  /* Dicts mutate in place, through small and dense layouts. */
  TVMFFIAny d = call_global("ffi.Dict", NULL, 0);
  TVMFFIAny d3[3] = {obj(d), any_none(), any_none()};
  for (int i = 0; i < 24; ++i) {
    d3[1] = big[2 * i];
    d3[2] = any_int(i * i);
    call_global("ffi.DictSetItem", d3, 3);
    if (i == 1 || i == 3 || i == 4 || i == 23) {
      char label[32];
      snprintf(label, sizeof(label), "dict after %d sets", i + 1);
      print_map(label, d);
    }
  }
  for (int i = 0; i < 24; i += 3) {
    d3[1] = big[2 * i];
    call_global("ffi.DictErase", d3, 2);
  }
  print_map("dict after erasing every third", d);
  d3[1] = big[2];
  d3[2] = any_int(-1);
  call_global("ffi.DictSetItem", d3, 3);
  print_map("dict after updating an existing key", d);
  printf("dict size %lld count %lld\n", (long long)get_int("ffi.DictSize", d3, 1),
         (long long)get_int("ffi.DictCount", d3, 2));
  d3[1] = any_int(-999);
  expect_error("dict missing key", "ffi.DictGetItem", d3, 2);
  call_global("ffi.DictClear", d3, 1);
  print_map("cleared dict", d);
  d3[0] = obj(arr);
  expect_error("DictSize on an Array", "ffi.DictSize", d3, 1);
  any_release(&d);
  for (int i = 0; i < 80; ++i) any_release(&big[i]);

  /* Finding a non-CPU device inside nested containers. */
  TVMFFIAny dev = call_global("ffi.ContainerFindFirstNonCPUDevice", &arr, 1);
  printf("first non-CPU device in an array of scalars: type %d device %d:%d\n", dev.type_index,
         dev.v_device.device_type, dev.v_device.device_id);
  any_release(&arr);
  for (int i = 0; i < 4; ++i) any_release(&elems[i]);
  return 0;
}
