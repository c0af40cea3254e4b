/* Small helpers shared by the scenario programs. */
#ifndef DTCOMMON_H
#define DTCOMMON_H
#include <windows.h>

#define NOINLINE __declspec(noinline)

typedef HRESULT(WINAPI *dt_PFN_SetThreadDescription)(HANDLE, PCWSTR);

/* SetThreadDescription, looked up at run time (mingw's import libraries may
 * not carry it). */
static inline void dt_name_thread(HANDLE thread, const wchar_t *name)
{
    dt_PFN_SetThreadDescription set = (dt_PFN_SetThreadDescription)GetProcAddress(
        GetModuleHandleW(L"kernelbase.dll"), "SetThreadDescription");
    if (set) set(thread, name);
}

/* The in-process crash reporter (src/capture/crashcap.c). */
#ifdef __cplusplus
extern "C"
#endif
__declspec(dllimport) int crashcap_install(void);

/* Memory for an object whose use after release must fault every time: its own
 * committed pages, decommitted on release (a stand-in for an allocator arena
 * being returned to the OS). Plain heap memory would often still be readable
 * after free, and the crash would depend on luck. */
static inline void *dt_page_alloc(SIZE_T size)
{
    return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}
static inline void dt_page_free(void *p)
{
    if (p) VirtualFree(p, 0, MEM_RELEASE);
}
#endif
