/* logsink.dll: the log sink plugin applog.dll loads and unloads. */
#include "../common/dtcommon.h"

__declspec(dllexport) int logsink_version(void) { return 2; }

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
