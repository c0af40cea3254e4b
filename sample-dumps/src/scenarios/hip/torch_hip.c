/* torch_hip.dll stand-in: the part of PyTorch's ROCm build that matters at
 * exit. Its HIP kernels are compiled in, so hipcc's module constructor runs
 * when the DLL is loaded: it registers the fat binary and, with atexit, the
 * matching __hip_module_dtor. In a DLL, atexit adds to the DLL's own onexit
 * table, which the C runtime runs from DllMain(DLL_PROCESS_DETACH): at
 * ExitProcess, under the loader lock, after every other thread of the
 * process was terminated. __hipUnregisterFatBinary then waits for the
 * streams to drain, and the host threads that would have drained them are
 * gone: the process never ends, whatever the program did before (which is
 * why os._exit() does not help). */
#include <windows.h>

#define NOINLINE __declspec(noinline)

__declspec(dllimport) int hipLaunchKernel(const void *function, unsigned gridX, unsigned blockX,
                                          void **args, size_t sharedMem, void *stream);
__declspec(dllimport) int hipSetDevice(int id);
__declspec(dllimport) int hipMalloc(void **ptr, size_t size);
__declspec(dllimport) void **__hipRegisterFatBinary(const void *data);
__declspec(dllimport) void __hipRegisterFunction(void **modules, const void *hostFunction,
                                                 char *deviceFunction, const char *deviceName,
                                                 unsigned threadLimit, void *tid, void *bid,
                                                 void *blockDim, void *gridDim, int *wSize);
__declspec(dllimport) void __hipUnregisterFatBinary(void **modules);

#include <stdlib.h>

/* Host-side stub of at::native's randn kernel. */
NOINLINE void normal_kernel_stub(float *out, unsigned n)
{
    (void)out;
    (void)n;
}

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
    __hipRegisterFunction(__hip_gpubin_handle, (const void *)normal_kernel_stub,
                          "_Z13normal_kernelPfj", "_Z13normal_kernelPfj", (unsigned)-1, NULL,
                          NULL, NULL, NULL, NULL);
    atexit(__hip_module_dtor);
}

static float *g_tensor;

/* torch.randn(1, 1, device="cuda"): allocate and launch, asynchronously. */
__declspec(dllexport) int torch_hip_randn(void)
{
    hipSetDevice(0);
    hipMalloc((void **)&g_tensor, sizeof(float));
    void *args[2] = {&g_tensor, NULL};
    return hipLaunchKernel((const void *)normal_kernel_stub, 1, 1, args, 0, NULL);
}
