"""C++ custom modules through the official Python package, on whichever
libtvm_ffi.so the package loads: the package's own build helpers compile
a ModuleObj subclass (tvm_ffi.cpp.load_inline) and the C++ custom-module
library of the C tests (tvm_ffi.cpp.build, then tvm_ffi.load_module, which
decodes its embedded tree through its load_from_bytes loader); Python then
calls them. Prints a transcript that must not depend on the library.

    usage: python tests/python/cxx_module.py BUILD_DIR
"""

import pathlib
import sys

import tvm_ffi
import tvm_ffi.cpp

root = pathlib.Path(__file__).resolve().parents[2]
shown = 0
build_dir = pathlib.Path(sys.argv[1])
build_dir.mkdir(parents=True, exist_ok=True)

INLINE = r"""
#include <tvm/ffi/cast.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <stdexcept>

namespace {
class GreeterObj final : public tvm::ffi::ModuleObj {
 public:
  explicit GreeterObj(tvm::ffi::String who) : who_(who) {}
  const char* kind() const final { return "greeter"; }
  tvm::ffi::Optional<tvm::ffi::Function> GetFunction(const tvm::ffi::String& name) final {
    tvm::ffi::Module self = tvm::ffi::GetRef<tvm::ffi::Module>(this);
    if (name == "greet") {
      return tvm::ffi::Function::FromTyped(
          [self, this](tvm::ffi::String to) { return "hello " + to + " from " + who_; });
    }
    if (name == "throws") throw std::runtime_error("no such greeting");
    return std::nullopt;
  }
  tvm::ffi::Optional<tvm::ffi::String> GetFunctionDoc(const tvm::ffi::String& name) final {
    if (name == "greet") return tvm::ffi::String("Greets someone.");
    return std::nullopt;
  }
  tvm::ffi::String InspectSource(const tvm::ffi::String& fmt) const final {
    return "greeter(" + who_ + ")";
  }
 private:
  tvm::ffi::String who_;
};
}  // namespace

tvm::ffi::Module make_greeter(tvm::ffi::String who) {
  return tvm::ffi::Module(tvm::ffi::make_object<GreeterObj>(who));
}
"""


def show(label, thunk):
    global shown
    shown += 1
    try:
        print(f"{label}: {thunk()!r}")
    except Exception as err:  # noqa: BLE001 - the transcript shows any error
        print(f"{label}: raised {type(err).__name__}: {err}")


inline = tvm_ffi.cpp.load_inline(
    "greeter_inline",
    cpp_sources=INLINE,
    functions=["make_greeter"],
    build_directory=str(build_dir / "inline"),
)
greeter = inline.make_greeter("cxx")
show("inline module kind", lambda: greeter.kind)
show("greet", lambda: greeter.greet("python"))
show("doc", lambda: greeter.get_function_doc("greet"))
show("inspect source", lambda: greeter.inspect_source())
show("implements greet", lambda: greeter.implements_function("greet"))
show("missing function", lambda: greeter.get_function("nope"))
show("a virtual method throwing std::runtime_error", lambda: greeter.get_function("throws"))
show("property mask", lambda: greeter.get_property_mask())

lib_path = tvm_ffi.cpp.build(
    "custom_module",
    sources=[str(root / "c-tests" / "plugin" / "custom_module.cc")],
    extra_cflags=["-Wno-unused-parameter"],
    build_directory=str(build_dir / "custom"),
)
lib = tvm_ffi.load_module(lib_path)
show("library kind", lambda: lib.kind)
show("library imports", lambda: [m.kind for m in lib.imports])
counter = lib.make_counter(7)
show("counter kind", lambda: counter.kind)
show("add(3)", lambda: counter.add(3))
show("get()", lambda: counter.get())
show("metadata of add", lambda: counter.get_function_metadata("add"))
# What each module says of itself, as the reference answers (a library
# module: no formats, no source); a DSL decides from these whether it can
# export a module.
show("write formats", lambda: list(counter.get_write_formats()))
show("library write formats", lambda: list(lib.get_write_formats()))
show("library source", lambda: lib.inspect_source())
show("loaded from the embedded tree", lambda: lib.imports[0].get())
show("lookup through library_ctx", lambda: lib.lookup_get())
show("get through imports", lambda: lib.get_function("get", query_imports=True)())
show("a throwing virtual method", lambda: counter.get_function("boom"))
show("a throwing function", lambda: counter.fail())
lib.import_module(counter)
show("imports after import_module", lambda: [m.kind for m in lib.imports])
show("cyclic import", lambda: counter.import_module(lib))
print(f"cxx-module: {shown} checks")
