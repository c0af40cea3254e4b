/* codec.dll: a video codec plugin with a decoder thread. Its
 * DllMain(DLL_PROCESS_DETACH) stops the thread and waits for it to end. When
 * the plugin is unloaded with FreeLibrary (here from the host's atexit
 * handler), DllMain runs under the loader lock, and an ending thread must
 * take the loader lock for its DLL_THREAD_DETACH notifications: the thread
 * can never end, and the wait never returns. */
#include "../common/dtcommon.h"

static HANDLE g_decoder, g_stop;

static DWORD WINAPI decoder_thread(LPVOID arg)
{
    (void)arg;
    dt_name_thread(GetCurrentThread(), L"codec-decoder");
    WaitForSingleObject(g_stop, INFINITE);
    return 0; /* ending needs the loader lock */
}

__declspec(dllexport) int codec_open(void)
{
    g_stop = CreateEventW(NULL, TRUE, FALSE, NULL);
    g_decoder = CreateThread(NULL, 0, decoder_thread, NULL, 0, NULL);
    return g_decoder != NULL;
}

NOINLINE static void stop_decoder(void)
{
    SetEvent(g_stop);
    WaitForSingleObject(g_decoder, INFINITE);
    CloseHandle(g_decoder);
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    /* reserved == NULL: FreeLibrary, not process termination. */
    if (reason == DLL_PROCESS_DETACH && reserved == NULL && g_decoder) stop_decoder();
    return TRUE;
}
