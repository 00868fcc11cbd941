/* For the tests under Wine only: Wine 8 has no bcryptprimitives.dll, whose
 * ProcessPrng Rust's standard library imports (since Rust 1.78) for its
 * hash keys. This stand-in forwards it to BCryptGenRandom, which Wine has.
 * Windows itself ships the real DLL: nothing here is installed. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
