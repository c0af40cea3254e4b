/* render_farm.exe: a job runner using applog.dll. Its atexit handler shuts
 * the logger down after telling the encoder worker to stop; the worker ends
 * while the logger holds its lock, and the two wait for each other through
 * the loader lock (see applog.c). */
#include "../common/dtcommon.h"
#include <stdlib.h>

__declspec(dllimport) void applog_write(const char *message);
__declspec(dllimport) void applog_open_sink(const wchar_t *path);
__declspec(dllimport) void applog_shutdown(HANDLE writers_stop);

static HANDLE g_stop;

static DWORD WINAPI encoder_worker(LPVOID arg)
{
    (void)arg;
    dt_name_thread(GetCurrentThread(), L"encoder-worker");
    while (WaitForSingleObject(g_stop, 20) == WAIT_TIMEOUT) applog_write("frame encoded");
    /* Returning ends the thread: applog's DLL_THREAD_DETACH runs now. */
    return 0;
}

NOINLINE static void stop_logging_at_exit(void)
{
    applog_shutdown(g_stop);
}

int wmain(void)
{
    dt_name_thread(GetCurrentThread(), L"render-main");
    g_stop = CreateEventW(NULL, TRUE, FALSE, NULL);
    applog_open_sink(L"logsink.dll");
    HANDLE worker = CreateThread(NULL, 0, encoder_worker, NULL, 0, NULL);
    CloseHandle(worker);
    atexit(stop_logging_at_exit);
    Sleep(200);
    applog_write("all frames rendered");
    return 0;
}
