/* Reference counting, deleter flags, opaque objects, the allocator slot. */
#include <pthread.h>
#include "common.h"

static int opaque_deleted = 0;
static void opaque_deleter(void* handle) { opaque_deleted += *(int*)handle; }

static void* hammer(void* obj) {
  for (int i = 0; i < 100000; ++i) {
    TVMFFIObjectIncRef(obj);
    TVMFFIObjectDecRef(obj);
  }
  return NULL;
}

static void* custom_allocate(size_t size, size_t alignment, int32_t type_index, void* ctx) {
  (void)size; (void)alignment; (void)type_index; (void)ctx;
  return NULL;
}

int main(void) {
  /* An opaque object starts with strong 1 and weak 1. */
  int token = 7;
  TVMFFIObjectHandle obj = NULL;
  CHECK_OK(TVMFFIObjectCreateOpaque(&token, kTVMFFIOpaquePyObject, opaque_deleter, &obj));
  TVMFFIObject* header = (TVMFFIObject*)obj;
  printf("opaque type_index %d ref_count %#llx\n", header->type_index,
         (unsigned long long)header->combined_ref_count);
  CHECK(((TVMFFIOpaqueObjectCell*)((char*)obj + sizeof(TVMFFIObject)))->handle == &token);

  /* Concurrent IncRef/DecRef leave the count unchanged. */
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, hammer, obj);
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  printf("after threads ref_count %#llx\n", (unsigned long long)header->combined_ref_count);

  CHECK_OK(TVMFFIObjectIncRef(obj));
  CHECK_OK(TVMFFIObjectDecRef(obj));
  CHECK(opaque_deleted == 0);
  /* A weak reference (as C++ WeakObjectPtr takes it) keeps the memory. */
  __atomic_fetch_add(&header->combined_ref_count, (uint64_t)1 << 32, __ATOMIC_RELAXED);
  CHECK_OK(TVMFFIObjectDecRef(obj));
  printf("strong gone: deleted %d, weak count %llu\n", opaque_deleted,
         (unsigned long long)(header->combined_ref_count >> 32));
  /* Dropping the last weak reference frees the memory (flag Weak). */
  __atomic_fetch_sub(&header->combined_ref_count, (uint64_t)1 << 32, __ATOMIC_RELAXED);
  header->deleter(header, kTVMFFIObjectDeleterFlagBitMaskWeak);

  /* Only kTVMFFIOpaquePyObject is accepted. */
  EXPECT_RAISES("opaque with type index 1", TVMFFIObjectCreateOpaque(&token, 1, NULL, &obj));

  /* The allocator slot: never NULL; NULL restores the builtin. */
  TVMFFICustomAllocator* builtin = TVMFFIGetCustomAllocator();
  CHECK(builtin != NULL && builtin->allocate != NULL);
  void* body = builtin->allocate(64, 8, kTVMFFIObject, builtin->context);
  CHECK(body != NULL && ((uintptr_t)body % 8) == 0);
  TVMFFIObjectAllocHeader* alloc_header = (TVMFFIObjectAllocHeader*)body - 1;
  memset(body, 0xab, 64);
  alloc_header->delete_space(body);
  TVMFFICustomAllocator mine = {custom_allocate, NULL};
  CHECK_OK(TVMFFISetCustomAllocator(&mine));
  CHECK(TVMFFIGetCustomAllocator() == &mine);
  CHECK_OK(TVMFFISetCustomAllocator(NULL));
  CHECK(TVMFFIGetCustomAllocator() == builtin);
  printf("allocator ok\n");
  return 0;
}
