/* HIP applications built from one source, one program per HIP_APP_MODE:
 *
 *  HIP_MODE_FATBIN (hip_repro.exe): the minimal C++ reproducer the ROCm
 *     investigation plans: a program with compiled-in device code (so hipcc's
 *     module constructor registers the fat binary and an atexit handler that
 *     unregisters it), one asynchronous kernel launch, no synchronize, return.
 *     Exit runs __hip_module_dtor -> __hipUnregisterFatBinary -> SyncAllStreams,
 *     which waits for work the GPU never retires.
 *  HIP_MODE_DETACH (hip_detach.exe): no device code in the executable, only
 *     runtime API calls; exit reaches ExitProcess, the OS kills the HIP host
 *     threads, and amdhip64's DllMain(DLL_PROCESS_DETACH) -> ihipDestroyDevice
 *     waits for a host thread that no longer exists.
 *  HIP_MODE_PAL (hip_pal.exe): the application's own atexit cleanup frees a
 *     device buffer; hipFree waits for the queue to go idle, i.e. a PAL fence
 *     wait at exit, with no fat binary unregistration anywhere.
 *  HIP_MODE_WORK_HANG (hip_train_step.exe): negative sample - the program hangs
 *     in hipStreamSynchronize in the middle of its work loop, not at exit.
 *  HIP_MODE_HEALTHY (hip_service.exe): negative sample - a healthy service with
 *     idle HIP host threads and its own named worker threads, all waiting
 *     normally; main thread in its event loop.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __declspec(noinline)

__declspec(dllimport) int hipSetDevice(int id);
__declspec(dllimport) int hipMalloc(void **ptr, size_t size);
__declspec(dllimport) int hipFree(void *ptr);
__declspec(dllimport) int hipLaunchKernel(const void *function, unsigned gridX, unsigned blockX,
                                          void **args, size_t sharedMem, void *stream);
__declspec(dllimport) int hipStreamSynchronize(void *stream);
__declspec(dllimport) void **__hipRegisterFatBinary(const void *data);
__declspec(dllimport) void __hipRegisterFunction(void **modules, const void *hostFunction,
                                                 char *deviceFunction, const char *deviceName,
                                                 unsigned threadLimit, void *tid, void *bid,
                                                 void *blockDim, void *gridDim, int *wSize);
__declspec(dllimport) void __hipUnregisterFatBinary(void **modules);

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

#if defined(HIP_MODE_FATBIN)
/* What hipcc generates for a translation unit with device code. */
static const unsigned char __hip_fatbin[64] = "__CLANG_OFFLOAD_BUNDLE__ stand-in";
static void **__hip_gpubin_handle;

NOINLINE static void __hip_module_dtor(void)
{
    if (__hip_gpubin_handle) {
        __hipUnregisterFatBinary(__hip_gpubin_handle);
        __hip_gpubin_handle = NULL;
    }
}

__attribute__((constructor)) NOINLINE static void __hip_module_ctor(void)
{
    __hip_gpubin_handle = __hipRegisterFatBinary(__hip_fatbin);
    __hipRegisterFunction(__hip_gpubin_handle, (const void *)randn_kernel_stub,
                          "_Z11randn_kernelPfj", "_Z11randn_kernelPfj", (unsigned)-1, NULL, NULL,
                          NULL, NULL, NULL);
    atexit(__hip_module_dtor);
}
#endif

static float *g_buffer;

NOINLINE static void launch_randn(void *stream)
{
    void *args[2] = {&g_buffer, NULL};
    hipLaunchKernel((const void *)randn_kernel_stub, 1, 1, args, 0, stream);
}

#if defined(HIP_MODE_PAL)
NOINLINE static void release_device_buffers(void)
{
    /* Application cleanup registered with atexit: frees its device memory. */
    hipFree(g_buffer);
    g_buffer = NULL;
}
#endif

#if defined(HIP_MODE_WORK_HANG)
NOINLINE static int train_step(int step)
{
    launch_randn(NULL);
    /* Read back the result: waits for the queued kernel. */
    hipStreamSynchronize(NULL);
    return step + 1;
}
#endif

#if defined(HIP_MODE_HEALTHY)
static HANDLE g_work_ready;

static DWORD WINAPI app_worker(LPVOID arg)
{
    wchar_t name[32];
    swprintf(name, 32, L"app-worker-%d", (int)(INT_PTR)arg);
    name_this_thread(name);
    for (;;) {
        if (WaitForSingleObject(g_work_ready, 100) == WAIT_OBJECT_0) ResetEvent(g_work_ready);
    }
    return 0;
}

NOINLINE static void serve_requests(void)
{
    char request[1024] = {0}; /* request buffer, cleared before the loop */
    (void)request;
    for (;;) {
        /* Event loop: wait for the next request, with a periodic tick. */
        WaitForSingleObject(g_work_ready, 250);
    }
}
#endif

int main(void)
{
    /* No console output on these paths: deep printf frames leave stale return
     * addresses that mislead stack scanning through Wine's symbol-less DLLs. */
    hipSetDevice(0);
    hipMalloc((void **)&g_buffer, sizeof(float));
#if defined(HIP_MODE_FATBIN)
    launch_randn(NULL); /* torch.randn(1, 1, device="cuda") */
    return 0;
#elif defined(HIP_MODE_DETACH)
    launch_randn(NULL);
    return 0;
#elif defined(HIP_MODE_PAL)
    atexit(release_device_buffers);
    launch_randn(NULL);
    return 0;
#elif defined(HIP_MODE_WORK_HANG)
    for (int step = 0; step < 1000; step = train_step(step)) {
    }
    return 0;
#elif defined(HIP_MODE_HEALTHY)
    g_work_ready = CreateEventW(NULL, TRUE, FALSE, NULL);
    name_this_thread(L"service-main");
    for (int i = 0; i < 2; i++) CloseHandle(CreateThread(NULL, 0, app_worker, (LPVOID)(INT_PTR)i, 0, NULL));
    serve_requests();
    return 0;
#else
#error "define one HIP_MODE_*"
#endif
}
