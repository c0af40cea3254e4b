/* hip_batch_infer.exe: negative sample. A HIP process whose host threads are
 * waiting on GPU fences (its last kernel is still queued) hangs at exit for a
 * reason of its own: its atexit handler waits for its log writer thread,
 * which is blocked writing to a pipe nobody reads. The fence waits are on
 * worker threads, not on the exiting thread: neither the HIP fat-binary nor
 * the PAL fence signature is the answer, only the generic hang at exit. */
#include <windows.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __declspec(noinline)

__declspec(dllimport) int hipSetDevice(int id);
__declspec(dllimport) int hipMalloc(void **ptr, size_t size);
__declspec(dllimport) int hipLaunchKernel(const void *function, unsigned gridX, unsigned blockX,
                                          void **args, size_t sharedMem, void *stream);

typedef HRESULT(WINAPI *PFN_SetThreadDescription)(HANDLE, PCWSTR);
static void name_this_thread(const wchar_t *name)
{
    PFN_SetThreadDescription set = (PFN_SetThreadDescription)GetProcAddress(
        GetModuleHandleW(L"kernelbase.dll"), "SetThreadDescription");
    if (set) set(GetCurrentThread(), name);
}

/* Host-side stub of a device kernel, as hipcc emits one per __global__. */
NOINLINE void randn_kernel_stub(float *out, unsigned n)
{
    (void)out;
    (void)n;
}

static float *g_buffer;

NOINLINE static void launch_randn(void *stream)
{
    void *args[2] = {&g_buffer, NULL};
    hipLaunchKernel((const void *)randn_kernel_stub, 1, 1, args, 0, stream);
}

static HANDLE g_log_thread, g_log_pipe_read, g_log_pipe_write;

static DWORD WINAPI log_writer(LPVOID arg)
{
    (void)arg;
    name_this_thread(L"batch-log-writer");
    /* The log goes to a pipe whose reader (a log shipper) went away without
     * closing it: once its buffer is full, the write blocks for ever. */
    static char line[65536];
    memset(line, '.', sizeof line);
    DWORD written;
    for (;;) WriteFile(g_log_pipe_write, line, sizeof line, &written, NULL);
    return 0;
}

NOINLINE static void flush_log_at_exit(void)
{
    /* atexit: let the log writer finish, then close the log. */
    WaitForSingleObject(g_log_thread, INFINITE);
}

int main(void)
{
    hipSetDevice(0);
    hipMalloc((void **)&g_buffer, sizeof(float));
    CreatePipe(&g_log_pipe_read, &g_log_pipe_write, NULL, 4096);
    g_log_thread = CreateThread(NULL, 0, log_writer, NULL, 0, NULL);
    atexit(flush_log_at_exit);
    launch_randn(NULL); /* the last batch, still queued on the GPU */
    return 0;
}
