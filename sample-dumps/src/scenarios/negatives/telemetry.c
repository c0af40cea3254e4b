/* telemetry.dll: a plugin whose DllMain(DLL_PROCESS_ATTACH) starts its
 * upload thread and waits for it to signal that it is running. A new thread
 * must take the loader lock to run the DLL_THREAD_ATTACH notifications before
 * its start routine, and the loader lock is held by the LoadLibrary that is
 * running this DllMain: the classic loader-lock deadlock, at start-up. */
#include "../common/dtcommon.h"

static HANDLE g_running;

static DWORD WINAPI upload_thread(LPVOID arg)
{
    (void)arg;
    SetEvent(g_running);
    for (;;) Sleep(1000);
    return 0;
}

NOINLINE static void start_uploader(void)
{
    g_running = CreateEventW(NULL, TRUE, FALSE, NULL);
    HANDLE t = CreateThread(NULL, 0, upload_thread, NULL, 0, NULL);
    WaitForSingleObject(g_running, INFINITE); /* never: the thread waits for the loader lock */
    CloseHandle(t);
}

__declspec(dllexport) int telemetry_enabled(void) { return 1; }

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH) start_uploader();
    return TRUE;
}
