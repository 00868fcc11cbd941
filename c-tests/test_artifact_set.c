/* Artifacts through the packed globals (ours only: the official library has
 * none): ffi.Artifact with its fields read through the reflection API,
 * name and sha256 checks, ffi.ArtifactFromConstants over a DLPack tensor,
 * and ffi.ArtifactSet with its duplicate check and filled-in metadata. */
#include "common.h"

static TVMFFIAny bytes_arg(const char* s) {
  TVMFFIByteArray b = byte_array(s);
  TVMFFIAny out = any_none();
  CHECK_OK(TVMFFIBytesFromByteArray(&b, &out));
  return out;
}

/* A Map<str, Any> of one entry (or empty when key is NULL). */
static TVMFFIAny map_of(const char* key, TVMFFIAny value) {
  if (key == NULL) return call_global("ffi.Map", NULL, 0);
  TVMFFIAny args[2] = {any_str(key), value};
  TVMFFIAny m = call_global("ffi.Map", args, 2);
  any_release(&args[0]);
  return m;
}

/* Calls ffi.Artifact; returns its code (the artifact in *out). */
static int make_artifact(const char* codegen, const char* loader, const char* file,
                         const char* content, TVMFFIAny metadata, TVMFFIAny* out) {
  TVMFFIAny args[5] = {any_str(codegen), any_str(loader), any_str(file), bytes_arg(content),
                       metadata};
  TVMFFIObjectHandle f = get_global("ffi.Artifact");
  *out = any_none();
  int rc = TVMFFIFunctionCall(f, args, 5, out);
  TVMFFIObjectDecRef(f);
  for (int i = 0; i < 5; ++i) any_release(&args[i]);
  return rc;
}

/* Prints every field of an object through its type's field getters. */
static void print_fields(TVMFFIObjectHandle obj) {
  int32_t index = ((TVMFFIObject*)obj)->type_index;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  CHECK(info != NULL);
  printf("type %.*s, %d fields\n", (int)info->type_key.size, info->type_key.data, info->num_fields);
  for (int i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo* f = &info->fields[i];
    TVMFFIAny v = any_none();
    CHECK_OK(f->getter((char*)obj + f->offset, &v));
    printf("  %.*s: type %d", (int)f->name.size, f->name.data, v.type_index);
    TVMFFIByteArray text = any_text(&v);
    if (text.data != NULL) printf(" \"%.*s\"", (int)text.size, text.data);
    printf("\n");
    any_release(&v);
  }
}

/* metadata[key] of an artifact or set, printed. */
static void print_meta(TVMFFIObjectHandle obj, const char* key) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(((TVMFFIObject*)obj)->type_index);
  const TVMFFIFieldInfo* f = &info->fields[info->num_fields - 1];
  TVMFFIAny meta = any_none();
  CHECK_OK(f->getter((char*)obj + f->offset, &meta));
  TVMFFIAny args[2] = {meta, any_str(key)};
  TVMFFIAny v = call_global("ffi.MapGetItem", args, 2);
  TVMFFIByteArray text = any_text(&v);
  if (v.type_index == kTVMFFIInt) {
    printf("  metadata[%s] = %lld\n", key, (long long)v.v_int64);
  } else {
    printf("  metadata[%s] = \"%.*s\"\n", key, (int)text.size, text.data);
  }
  any_release(&v);
  any_release(&args[1]);
  any_release(&meta);
}

static float weights[6] = {1, 2, 3, 4, 5, 6};
static int64_t weight_shape[2] = {2, 3};
static int released = 0;
static void release_managed(DLManagedTensorVersioned* m) {
  ++released;
  (void)m;
}

/* A custom inspector for format "bin". */
static int inspect_bin(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  TVMFFIByteArray text = byte_array("a custom view of a bin artifact");
  return TVMFFIStringFromByteArray(&text, result);
}

/* Prints ffi.ArtifactInspect of an artifact. */
static void print_inspect(TVMFFIAny artifact) {
  TVMFFIAny text = call_global("ffi.ArtifactInspect", &artifact, 1);
  TVMFFIByteArray b = any_text(&text);
  printf("inspect: %.*s\n", (int)b.size, b.data);
  any_release(&text);
}

int main(void) {
  TVMFFIAny a = any_none();
  CHECK_OK(make_artifact("c", "native", "lib0.c", "int x;", map_of("format", any_str("c")), &a));
  print_fields(a.v_obj);
  print_meta(a.v_obj, "format");
  print_meta(a.v_obj, "sha256");
  print_inspect(a);
  TVMFFIObjectHandle inspector = NULL;
  CHECK_OK(TVMFFIFunctionCreate(NULL, inspect_bin, NULL, &inspector));
  TVMFFIByteArray inspector_name = byte_array("ffi.Artifact.inspect.bin");
  CHECK_OK(TVMFFIFunctionSetGlobal(&inspector_name, inspector, 0));
  TVMFFIObjectDecRef(inspector);
  TVMFFIAny bin = any_none();
  CHECK_OK(make_artifact("dsp", "dsp", "k.bin", "\x01\x02", map_of("format", any_str("bin")), &bin));
  print_inspect(bin);
  any_release(&bin);

  /* Names and metadata are checked; each error names the field. */
  const char* bad_files[] = {"", ".", "..", "a/b", "a\\b"};
  for (int i = 0; i < 5; ++i) {
    TVMFFIAny x;
    char label[64];
    snprintf(label, sizeof(label), "file_name \"%s\"", bad_files[i]);
    EXPECT_RAISES(label, make_artifact("c", "native", bad_files[i], "", any_none(), &x));
  }
  TVMFFIAny x;
  EXPECT_RAISES("codegen_id \"c d\"", make_artifact("c d", "native", "f", "", any_none(), &x));
  EXPECT_RAISES("loader \"\"", make_artifact("c", "", "f", "", any_none(), &x));
  EXPECT_RAISES("wrong sha256",
                make_artifact("c", "native", "f", "x", map_of("sha256", any_str("00")), &x));
  EXPECT_RAISES("format an int", make_artifact("c", "native", "f", "x", map_of("format", any_int(1)), &x));
  CHECK_OK(make_artifact("c", "native", "a..b", "", any_none(), &x));
  any_release(&x);

  /* Constants: a DLPack tensor serialized into a params artifact. */
  DLManagedTensorVersioned managed;
  TVMFFIAny tensor = cpu_f32_tensor_value(&managed, release_managed, weights, 2, weight_shape);
  TVMFFIAny constants = map_of("w", tensor);
  TVMFFIAny cargs[3] = {any_str("c"), any_str("consts"), constants};
  TVMFFIAny params = call_global("ffi.ArtifactFromConstants", cargs, 3);
  print_fields(params.v_obj);
  print_meta(params.v_obj, "format");
  any_release(&cargs[0]);
  any_release(&cargs[1]);
  any_release(&constants);
  any_release(&tensor);
  CHECK(released == 1);

  /* Sets: duplicates refused, metadata filled in. */
  TVMFFIAny items[2] = {a, a};
  TVMFFIAny dup_array = call_global("ffi.Array", items, 2);
  TVMFFIAny sargs[2] = {dup_array, any_none()};
  TVMFFIObjectHandle fset = get_global("ffi.ArtifactSet");
  TVMFFIAny set = any_none();
  EXPECT_RAISES("duplicate artifacts", TVMFFIFunctionCall(fset, sargs, 2, &set));
  any_release(&dup_array);
  items[1] = params;
  TVMFFIAny array = call_global("ffi.Array", items, 2);
  sargs[0] = array;
  sargs[1] = map_of("model_name", any_str("resnet"));
  CHECK_OK(TVMFFIFunctionCall(fset, sargs, 2, &set));
  any_release(&sargs[1]);
  print_fields(set.v_obj);
  print_meta(set.v_obj, "model_name");
  print_meta(set.v_obj, "version");
  print_meta(set.v_obj, "tvm_ffi_abi");
  TVMFFIAny bad_name = map_of("model_name", any_str("../x"));
  sargs[1] = bad_name;
  TVMFFIAny set2 = any_none();
  EXPECT_RAISES("model_name \"../x\"", TVMFFIFunctionCall(fset, sargs, 2, &set2));
  any_release(&bad_name);
  TVMFFIObjectDecRef(fset);
  any_release(&array);
  any_release(&set);
  any_release(&params);
  any_release(&a);
  printf("artifact-set: ok\n");
  return 0;
}
