/* cl_engine.dll: an image-processing library (the shape of Halide's or
 * darktable's OpenCL runtimes): it keeps its OpenCL context in a static and
 * releases it from a cleanup registered with atexit, which in a DLL runs from
 * this DLL's DLL_PROCESS_DETACH, after the ICD loaded later was detached. */
#include "../common/dtcommon.h"
#include <stdlib.h>

typedef struct _cl_context *cl_context;
__declspec(dllimport) int clGetPlatformIDs(unsigned entries, void **platforms, unsigned *count);
__declspec(dllimport) cl_context clCreateContext(void);
__declspec(dllimport) int clReleaseContext(cl_context context);

static cl_context g_context;

NOINLINE static void cl_engine_release_context(void)
{
    if (g_context) clReleaseContext(g_context);
    g_context = NULL;
}

__declspec(dllexport) int cl_engine_init(void)
{
    unsigned platforms = 0;
    clGetPlatformIDs(1, NULL, &platforms);
    if (!platforms) return 0;
    g_context = clCreateContext();
    atexit(cl_engine_release_context);
    return 1;
}
