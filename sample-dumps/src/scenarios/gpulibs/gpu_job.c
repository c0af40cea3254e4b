/* gpu_job.exe ENGINE.dll: loads an inference/training engine, initialises
 * it and returns; exit crashes in the GPU library (see engines.c). */
#include "../common/dtcommon.h"

typedef int (*PFN_init)(void);

NOINLINE static int run_job(const wchar_t *engine_dll)
{
    HMODULE engine = LoadLibraryW(engine_dll);
    if (!engine) return 2;
    PFN_init init = (PFN_init)GetProcAddress(engine, "engine_init");
    if (!init || !init()) return 3;
    /* ... the job's work ... */
    return 0;
}

int wmain(int argc, wchar_t **argv)
{
    crashcap_install();
    return argc > 1 ? run_job(argv[1]) : 4;
}
