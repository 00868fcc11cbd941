// What MSVC links into every module, for code built in MSVC's ABI without
// MSVC's libraries: the global allocation functions, on UCRT's heap (which
// MSVC-compiled code allocates from and frees into), and type_info's
// vftable. Built into tvm_ffi.dll's C++ layer and into the MSVC-ABI test
// program (tests/platforms/windows/msvc_host).
#include "std.h"

void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return _malloc_base(size == 0 ? 1 : size);
}
void operator delete(void* block) noexcept { _free_base(block); }
void operator delete(void* block, size_t) noexcept { _free_base(block); }
// Newer clang puts vector deleting destructors in vftables, as MSVC does.
void operator delete[](void* block) noexcept { _free_base(block); }
void operator delete[](void* block, size_t) noexcept { _free_base(block); }

// type_info's vftable, which the type descriptors of RTTI and exceptions
// point to; its one slot (the destructor) is never called through them.
namespace {
void TypeInfoDestructor() { __builtin_trap(); }
}  // namespace
extern "C++" const void* const type_info_vftable[1] __asm__("??_7type_info@@6B@") = {
    reinterpret_cast<const void*>(&TypeInfoDestructor)};
