/* photo_export.exe: loads its OpenCL image engine, exports a picture and
 * returns. Exit crashes in the OpenCL driver (see cl_engine.c). */
#include "../common/dtcommon.h"

typedef int (*PFN_init)(void);

NOINLINE static int export_with_opencl(void)
{
    HMODULE engine = LoadLibraryW(L"cl_engine.dll");
    if (!engine) return 2;
    PFN_init init = (PFN_init)GetProcAddress(engine, "cl_engine_init");
    if (!init || !init()) return 3;
    /* ... process and write the image ... */
    return 0;
}

int wmain(void)
{
    crashcap_install();
    return export_with_opencl();
}
