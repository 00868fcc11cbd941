// Loads the library built beside it through the C++ API, calls add_one and
// says which libtvm_ffi the process mapped (argv[2] is the expected file).
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  tvm::ffi::Module mod = tvm::ffi::Module::LoadFromFile(argv[1]);
  tvm::ffi::Function f = mod->GetFunction("add_one").value();
  int64_t y = f(41).cast<int64_t>();
  std::ifstream maps("/proc/self/maps");
  std::string line, mapped;
  while (std::getline(maps, line)) {
    auto at = line.find('/');
    if (at != std::string::npos && line.find("libtvm_ffi", at) != std::string::npos) mapped = line.substr(at);
  }
  std::printf("add_one(41) = %lld through tvm::ffi::Module; libtvm_ffi mapped: %s\n", static_cast<long long>(y),
              mapped.c_str());
  return y == 42 && mapped == argv[2] ? 0 : 1;
}
