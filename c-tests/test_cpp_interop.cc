// A C++ program compiled with the official TVM-FFI C++ headers receives
// containers made by the library it runs on (ours or the official one),
// iterates them and looks keys up with its own inline hashing and probing;
// it also grows a Dict in place from C++ and reads it back through the
// library's globals. The transcript must not depend on the library.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <string>
#include <vector>

using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::Dict;
using tvm::ffi::Function;
using tvm::ffi::Map;
using tvm::ffi::String;

static std::string Show(const Any& v) {
  if (auto i = v.try_cast<int64_t>()) return std::to_string(*i);
  if (auto s = v.try_cast<String>()) return "'" + std::string(*s) + "'";
  if (v == nullptr) return "None";
  return "<" + std::to_string(v.type_index()) + ">";
}

static Any KeyOf(int i) {
  if (i % 4 == 0) return Any(static_cast<int64_t>(i) * 1000003);
  return Any(String((i % 3 ? "key-" : "k") + std::to_string(i)));
}

int main() {
  Function make_array = Function::GetGlobalRequired("ffi.Array");
  Function make_map = Function::GetGlobalRequired("ffi.Map");
  Function make_dict = Function::GetGlobalRequired("ffi.Dict");
  Function dict_get = Function::GetGlobalRequired("ffi.DictGetItem");
  Function dict_size = Function::GetGlobalRequired("ffi.DictSize");

  Array<Any> arr = make_array(1, String("two"), String("a string longer than seven"), nullptr)
                       .cast<Array<Any>>();
  std::printf("array of %zu:", arr.size());
  for (const Any& v : arr) std::printf(" %s", Show(v).c_str());
  std::printf("\n");

  for (int n : {3, 40}) {
    std::vector<AnyView> args;
    std::vector<Any> keep;
    for (int i = 0; i < n; ++i) {
      keep.push_back(KeyOf(i));
      keep.push_back(Any(static_cast<int64_t>(i)));
    }
    for (const Any& a : keep) args.push_back(AnyView(a));
    Any result;
    make_map.CallPacked(tvm::ffi::PackedArgs(args.data(), static_cast<int>(args.size())), &result);
    Map<Any, Any> map = result.cast<Map<Any, Any>>();
    std::printf("map of %d, size %zu, iteration:", n, map.size());
    for (const auto& kv : map) std::printf(" %s=%s", Show(kv.first).c_str(), Show(kv.second).c_str());
    std::printf("\n  lookups by the C++ side:");
    int found = 0;
    for (int i = 0; i < n; ++i) {
      auto it = map.find(KeyOf(i));
      if (it != map.end() && (*it).second.cast<int64_t>() == i) ++found;
    }
    // Keys equal by content but made here (small and heap strings alike).
    bool small_key = map.count(String("key-1")) == 1;
    bool absent = map.count(String("no such key")) == 0 && map.count(Any(int64_t{-5})) == 0;
    std::printf(" %d/%d found, 'key-1' %d, absent keys %d\n", found, n, small_key, absent);
  }

  // Grow a library-made Dict in place from C++ (small -> larger -> dense),
  // then read it through the library.
  Dict<Any, Any> dict = make_dict().cast<Dict<Any, Any>>();
  for (int i = 0; i < 30; ++i) dict.Set(KeyOf(i), Any(static_cast<int64_t>(i * 2)));
  dict.erase(KeyOf(7));
  int64_t size = dict_size(dict).cast<int64_t>();
  int64_t sum = 0;
  for (int i = 0; i < 30; ++i) {
    if (i != 7) sum += dict_get(dict, KeyOf(i)).cast<int64_t>();
  }
  std::printf("dict grown from C++: size %lld, sum through the library %lld\n",
              static_cast<long long>(size), static_cast<long long>(sum));
  return 0;
}
