/* amdocl64.dll stand-in: AMD's OpenCL ICD. Contexts belong to the runtime's
 * device list, created when the DLL is loaded and destroyed by its
 * DLL_PROCESS_DETACH (the pages returned to the OS). */
#include "../common/dtcommon.h"

typedef struct _cl_context *cl_context;
typedef int cl_int;

struct DeviceList {
    LONG contexts;
    unsigned long long memory_in_use;
};
static struct DeviceList *g_devices;

NOINLINE static cl_context amd_clCreateContext(void)
{
    InterlockedIncrement(&g_devices->contexts);
    return (cl_context)g_devices;
}

NOINLINE static void amd_Context_release(struct DeviceList *devices)
{
    InterlockedDecrement(&devices->contexts);
    devices->memory_in_use = 0;
}

NOINLINE static cl_int amd_clReleaseContext(cl_context context)
{
    (void)context;
    amd_Context_release(g_devices); /* the runtime's own list */
    return 0;
}

__declspec(dllexport) void *clIcdGetExtensionFunctionAddress(const char *name)
{
    if (!lstrcmpA(name, "clCreateContext")) return (void *)amd_clCreateContext;
    if (!lstrcmpA(name, "clReleaseContext")) return (void *)amd_clReleaseContext;
    return NULL;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH)
        g_devices = (struct DeviceList *)dt_page_alloc(sizeof *g_devices);
    else if (reason == DLL_PROCESS_DETACH)
        dt_page_free(g_devices); /* amd::Runtime::tearDown */
    return TRUE;
}
