/* media_host.exe: loads the codec plugin and unloads it from its atexit
 * handler; the plugin's DllMain waits there for its decoder thread, which
 * needs the loader lock that FreeLibrary holds (see codec.c). */
#include "../common/dtcommon.h"
#include <stdlib.h>

typedef int (*codec_open_fn)(void);
static HMODULE g_codec;

NOINLINE static void unload_plugins_at_exit(void)
{
    if (g_codec) FreeLibrary(g_codec);
}

int wmain(void)
{
    dt_name_thread(GetCurrentThread(), L"media-main");
    g_codec = LoadLibraryW(L"codec.dll");
    codec_open_fn open = g_codec ? (codec_open_fn)GetProcAddress(g_codec, "codec_open") : NULL;
    if (!open || !open()) return 1;
    atexit(unload_plugins_at_exit);
    Sleep(100);
    return 0;
}
