/* gpu_queue.exe: a submission thread takes the queue lock, meets a device
 * error and returns from its thread routine without releasing the lock. The
 * critical section stays owned by a thread that no longer exists; the
 * program's atexit handler, which drains the queue, waits for it for ever. */
#include "../common/dtcommon.h"
#include <stdlib.h>

static CRITICAL_SECTION g_queue_lock;
static volatile LONG g_pending = 3;

NOINLINE static int submit_batch(void)
{
    return -4; /* device lost */
}

static DWORD WINAPI submit_thread(LPVOID arg)
{
    (void)arg;
    dt_name_thread(GetCurrentThread(), L"gpu-submit");
    EnterCriticalSection(&g_queue_lock);
    if (submit_batch() < 0) return 1; /* the bug: the lock is never left */
    g_pending = 0;
    LeaveCriticalSection(&g_queue_lock);
    return 0;
}

NOINLINE static void drain_queue_at_exit(void)
{
    EnterCriticalSection(&g_queue_lock);
    g_pending = 0;
    LeaveCriticalSection(&g_queue_lock);
}

int wmain(void)
{
    dt_name_thread(GetCurrentThread(), L"queue-main");
    InitializeCriticalSection(&g_queue_lock);
    atexit(drain_queue_at_exit);
    HANDLE t = CreateThread(NULL, 0, submit_thread, NULL, 0, NULL);
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
    return 0;
}
