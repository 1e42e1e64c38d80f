/* ProcessPrng for Wine 8 (Debian 12's), which lacks bcryptprimitives.dll: Rust's std (1.78 and
 * later) imports it for its random numbers, so no Rust program starts there without it. Built
 * with mingw by scripts/check-windows.sh and put beside the test executables it runs under Wine;
 * never shipped. The same contract as Windows': fill `len` bytes, TRUE on success. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len; /* BCryptGenRandom takes a ULONG */
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
