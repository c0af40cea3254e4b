/* plugin_host.exe: negative sample. At start-up it loads its plugins with
 * LoadLibrary; telemetry.dll deadlocks in its DllMain (see telemetry.c). The
 * process hangs under the loader lock during start-up, with main on the
 * stack: a loader-lock hang, but not at exit. */
#include "../common/dtcommon.h"

typedef int (*PFN_enabled)(void);

NOINLINE static int load_plugin(const wchar_t *name)
{
    HMODULE lib = LoadLibraryW(name);
    if (!lib) return 0;
    PFN_enabled enabled = (PFN_enabled)GetProcAddress(lib, "telemetry_enabled");
    return enabled ? enabled() : 1;
}

NOINLINE static int load_plugins(void)
{
    return load_plugin(L"telemetry.dll");
}

int wmain(void)
{
    dt_name_thread(GetCurrentThread(), L"plugin-host-main");
    return load_plugins() ? 0 : 1;
}
