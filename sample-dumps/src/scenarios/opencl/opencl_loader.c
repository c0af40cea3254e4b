/* OpenCL.dll stand-in: the Khronos OpenCL ICD loader. clGetPlatformIDs loads
 * the vendor ICD (found in the registry) and takes its dispatch table; every
 * other entry point is a trampoline through the object's dispatch table into
 * the ICD. */
#include "../common/dtcommon.h"

typedef struct _cl_context *cl_context;
typedef int cl_int;
typedef cl_int (*PFN_clReleaseContext)(cl_context);
typedef cl_context (*PFN_clCreateContext)(void);
typedef void *(*PFN_icdGetExtensionFunctionAddress)(const char *);

static PFN_clReleaseContext icd_release_context;
static PFN_clCreateContext icd_create_context;

NOINLINE static int khrIcdVendorAdd(const wchar_t *library)
{
    HMODULE icd = LoadLibraryW(library);
    if (!icd) return 0;
    PFN_icdGetExtensionFunctionAddress get = (PFN_icdGetExtensionFunctionAddress)GetProcAddress(
        icd, "clIcdGetExtensionFunctionAddress");
    if (!get) return 0;
    icd_create_context = (PFN_clCreateContext)get("clCreateContext");
    icd_release_context = (PFN_clReleaseContext)get("clReleaseContext");
    return icd_create_context && icd_release_context;
}

__declspec(dllexport) cl_int clGetPlatformIDs(unsigned entries, void **platforms, unsigned *count)
{
    (void)entries;
    (void)platforms;
    /* HKLM\SOFTWARE\Khronos\OpenCL\Vendors lists the ICDs. */
    *count = khrIcdVendorAdd(L"amdocl64.dll") ? 1 : 0;
    return 0;
}

__declspec(dllexport) cl_context clCreateContext(void) { return icd_create_context(); }

__declspec(dllexport) cl_int clReleaseContext(cl_context context)
{
    return icd_release_context(context);
}
