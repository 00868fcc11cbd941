/* Tensors and DLPack: import/export in both directions with deleter
 * counting, alignment and contiguity checks, views, the env allocator. */
#include "common.h"

static int deleted_v0 = 0, deleted_v1 = 0;
static void delete_v0(DLManagedTensor* self) { ++deleted_v0; (void)self; }
static void delete_v1(DLManagedTensorVersioned* self) { ++deleted_v1; (void)self; }

static float data[24];
static int64_t shape3[3] = {2, 3, 4};
static int64_t strides_col[3] = {1, 2, 6};

static DLManagedTensor make_v0(void* ptr, int64_t* strides) {
  DLManagedTensor m;
  memset(&m, 0, sizeof(m));
  m.dl_tensor = cpu_f32_tensor(ptr, 3, shape3);
  m.dl_tensor.strides = strides;
  m.deleter = delete_v0;
  return m;
}

static DLTensor* cell(TVMFFIObjectHandle t) { return (DLTensor*)((char*)t + sizeof(TVMFFIObject)); }

/* Test allocator: mallocs data, counts frees. */
static int alloc_frees = 0;
static void free_alloc(DLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
  ++alloc_frees;
}
static int test_allocator(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                          void (*set_error)(void*, const char*, const char*)) {
  if (proto->ndim > 4) {
    set_error(ctx, "ValueError", "test allocator: too many dims");
    return -1;
  }
  DLManagedTensorVersioned* m = calloc(1, sizeof(*m));
  m->version.major = 1;
  m->dl_tensor = *proto;
  m->dl_tensor.shape = malloc(sizeof(int64_t) * (size_t)proto->ndim + 1);
  memcpy(m->dl_tensor.shape, proto->shape, sizeof(int64_t) * (size_t)proto->ndim);
  m->dl_tensor.strides = NULL;
  size_t n = 1;
  for (int i = 0; i < proto->ndim; ++i) n *= (size_t)proto->shape[i];
  m->dl_tensor.data = calloc(n, (proto->dtype.bits * proto->dtype.lanes + 7) / 8);
  m->deleter = free_alloc;
  *out = m;
  return 0;
}

int main(void) {
  /* Import without strides: compact strides appear; the data is shared. */
  DLManagedTensor m0 = make_v0(data, NULL);
  TVMFFIObjectHandle t = NULL;
  CHECK_OK(TVMFFITensorFromDLPack(&m0, 16, 1, &t));
  DLTensor* dl = cell(t);
  printf("import: type %d ndim %d data shared %d shape shared %d strides %lld %lld %lld\n",
         ((TVMFFIObject*)t)->type_index, dl->ndim, dl->data == (void*)data, dl->shape == shape3,
         (long long)dl->strides[0], (long long)dl->strides[1], (long long)dl->strides[2]);

  /* Export holds the tensor; the producer's deleter runs after the last holder. */
  DLManagedTensor* exported = NULL;
  CHECK_OK(TVMFFITensorToDLPack(t, &exported));
  DLManagedTensorVersioned* exported_v1 = NULL;
  CHECK_OK(TVMFFITensorToDLPackVersioned(t, &exported_v1));
  printf("export: same data %d, version %u.%u flags %llu\n", exported->dl_tensor.data == (void*)data,
         exported_v1->version.major, exported_v1->version.minor, (unsigned long long)exported_v1->flags);
  CHECK_OK(TVMFFIObjectDecRef(t));
  printf("after tensor released: producer deleted %d\n", deleted_v0);
  exported->deleter(exported);
  printf("after v0 export released: producer deleted %d\n", deleted_v0);
  /* Re-import the exported v1 into a new Tensor, then drop it. */
  TVMFFIObjectHandle again = NULL;
  CHECK_OK(TVMFFITensorFromDLPackVersioned(exported_v1, 0, 0, &again));
  printf("re-imported shares data %d\n", cell(again)->data == (void*)data);
  CHECK_OK(TVMFFIObjectDecRef(again));
  printf("after re-import released: producer deleted %d\n", deleted_v0);

  /* Failures leave the managed tensor with the caller. */
  DLManagedTensor misaligned = make_v0((char*)data + 2, NULL);
  EXPECT_RAISES("misaligned import", TVMFFITensorFromDLPack(&misaligned, 16, 0, &t));
  printf("misaligned import deleted %d\n", deleted_v0 - 1);
  DLManagedTensor strided = make_v0(data, strides_col);
  EXPECT_RAISES("non-contiguous import", TVMFFITensorFromDLPack(&strided, 0, 1, &t));
  CHECK_OK(TVMFFITensorFromDLPack(&strided, 0, 0, &t));
  printf("strided kept strides %d\n", cell(t)->strides == strides_col);
  CHECK_OK(TVMFFIObjectDecRef(t));
  /* Size-1 dims are ignored by the contiguity check; empty tensors pass. */
  int64_t shape_1[2] = {1, 4}, strides_1[2] = {99, 1};
  DLManagedTensor ones = make_v0(data, strides_1);
  ones.dl_tensor.ndim = 2;
  ones.dl_tensor.shape = shape_1;
  CHECK_OK(TVMFFITensorFromDLPack(&ones, 0, 1, &t));
  CHECK_OK(TVMFFIObjectDecRef(t));
  /* Non-host devices check only the byte offset. */
  DLManagedTensor gpu = make_v0((char*)data + 2, NULL);
  gpu.dl_tensor.device.device_type = kDLOpenCL;
  CHECK_OK(TVMFFITensorFromDLPack(&gpu, 64, 0, &t));
  CHECK_OK(TVMFFIObjectDecRef(t));
  gpu.dl_tensor.byte_offset = 8;
  EXPECT_RAISES("device byte offset misaligned", TVMFFITensorFromDLPack(&gpu, 64, 0, &t));

  DLManagedTensorVersioned padded;
  memset(&padded, 0, sizeof(padded));
  padded.dl_tensor = make_v0(data, NULL).dl_tensor;
  padded.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  padded.deleter = delete_v1;
  EXPECT_RAISES("sub-byte padded import", TVMFFITensorFromDLPackVersioned(&padded, 0, 0, &t));
  padded.flags = 0;
  CHECK_OK(TVMFFITensorFromDLPackVersioned(&padded, 0, 0, &t));
  printf("producer counts so far: v0 %d v1 %d\n", deleted_v0, deleted_v1);

  /* A view keeps its source alive and copies shape and strides. */
  DLTensor proto = *cell(t);
  int64_t view_shape[1] = {6}, view_strides[1] = {2};
  proto.ndim = 1;
  proto.shape = view_shape;
  proto.strides = view_strides;
  proto.data = data + 1;
  TVMFFIObjectHandle view = NULL;
  CHECK_OK(TVMFFITensorCreateUnsafeView(t, &proto, &view));
  CHECK_OK(TVMFFIObjectDecRef(t));
  printf("view: ndim %d shape %lld stride %lld copied %d data offset %d, source alive %d\n",
         cell(view)->ndim, (long long)cell(view)->shape[0], (long long)cell(view)->strides[0],
         cell(view)->shape != view_shape, (int)((float*)cell(view)->data - data), deleted_v1 == 0);
  CHECK_OK(TVMFFIObjectDecRef(view));
  printf("view released: v1 deleted %d\n", deleted_v1);

  /* The environment allocator. */
  DLTensor req;
  memset(&req, 0, sizeof(req));
  int64_t req_shape[2] = {3, 5};
  req.ndim = 2;
  req.shape = req_shape;
  req.dtype.code = kDLFloat;
  req.dtype.bits = 16;
  req.dtype.lanes = 1;
  req.device.device_type = kDLCPU;
  TVMFFIObjectHandle allocated = NULL;
  EXPECT_RAISES("alloc without allocator", TVMFFIEnvTensorAlloc(&req, &allocated));
  DLPackManagedTensorAllocator prev = (DLPackManagedTensorAllocator)1;
  CHECK_OK(TVMFFIEnvSetDLPackManagedTensorAllocator(test_allocator, 0, &prev));
  CHECK(prev == NULL && TVMFFIEnvGetDLPackManagedTensorAllocator() == test_allocator);
  CHECK_OK(TVMFFIEnvTensorAlloc(&req, &allocated));
  printf("allocated: ndim %d shape %lld %lld strides %lld %lld bits %d\n", cell(allocated)->ndim,
         (long long)cell(allocated)->shape[0], (long long)cell(allocated)->shape[1],
         (long long)cell(allocated)->strides[0], (long long)cell(allocated)->strides[1],
         cell(allocated)->dtype.bits);
  CHECK_OK(TVMFFIObjectDecRef(allocated));
  req.ndim = 5;
  EXPECT_RAISES("allocator error passes through", TVMFFIEnvTensorAlloc(&req, &allocated));
  printf("allocator frees %d\n", alloc_frees);
  CHECK_OK(TVMFFIEnvSetDLPackManagedTensorAllocator(NULL, 0, &prev));
  CHECK(prev == test_allocator);
  return 0;
}
