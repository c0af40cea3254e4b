/* applog.dll: an application logging library with per-thread buffers.
 * Its DllMain(DLL_THREAD_DETACH) flushes the ending thread's buffer into the
 * shared log under the log lock, so it takes the log lock while the loader
 * lock is held (the loader runs thread-detach notifications under it). Its
 * shutdown, run by the program's atexit handler, takes the log lock and then
 * unloads the log sink plugin: FreeLibrary needs the loader lock. A worker
 * thread ending at that moment holds the loader lock and waits for the log
 * lock; the exiting thread holds the log lock and waits for the loader lock. */
#include "../common/dtcommon.h"

static CRITICAL_SECTION g_log_lock;
static HMODULE g_sink;
static volatile LONG g_records;

NOINLINE static void append_record(void)
{
    InterlockedIncrement(&g_records);
}

NOINLINE static void flush_thread_buffer(void)
{
    EnterCriticalSection(&g_log_lock);
    append_record();
    LeaveCriticalSection(&g_log_lock);
}

__declspec(dllexport) void applog_write(const char *message)
{
    (void)message;
    EnterCriticalSection(&g_log_lock);
    append_record();
    LeaveCriticalSection(&g_log_lock);
}

__declspec(dllexport) void applog_open_sink(const wchar_t *path)
{
    g_sink = LoadLibraryW(path);
}

NOINLINE static void close_sink(void)
{
    if (g_sink) FreeLibrary(g_sink);
    g_sink = NULL;
}

/* Called once at exit: no record may be written while the writers stop and
 * the sink closes, so the lock is held throughout. */
__declspec(dllexport) void applog_shutdown(HANDLE writers_stop)
{
    EnterCriticalSection(&g_log_lock);
    SetEvent(writers_stop);
    /* The writers' last records are formatted first (a stand-in for the
     * formatting and I/O a real logger does here). */
    Sleep(300);
    close_sink();
    LeaveCriticalSection(&g_log_lock);
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH) InitializeCriticalSection(&g_log_lock);
    if (reason == DLL_THREAD_DETACH) flush_thread_buffer();
    return TRUE;
}
