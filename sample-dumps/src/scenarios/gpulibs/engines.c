/* The libraries that keep a GPU handle in a static and release it from an
 * atexit cleanup, which in a DLL runs from that DLL's onexit table at its
 * DLL_PROCESS_DETACH. The GPU library is loaded on demand (LoadLibrary, as
 * ONNX Runtime loads DirectML and PyTorch loads cuDNN), so it initialised
 * after this DLL and is detached before it at ExitProcess:
 *   ENGINE_DML   (dml_session.dll): a DirectML device;
 *   ENGINE_CUDNN (conv_engine.dll): a cuDNN handle. */
#include "../common/dtcommon.h"
#include <stdlib.h>

#if defined(ENGINE_DML)
typedef HRESULT (*PFN_DMLCreateDevice)(void *, unsigned, const void *, void **);
typedef unsigned long (*PFN_DMLDeviceRelease)(void *);
static PFN_DMLDeviceRelease dml_release;
static void *g_dml_device;

NOINLINE static void dml_session_release_device(void)
{
    if (g_dml_device) dml_release(g_dml_device);
    g_dml_device = NULL;
}

__declspec(dllexport) int engine_init(void)
{
    HMODULE dml = LoadLibraryW(L"DirectML.dll");
    if (!dml) return 0;
    PFN_DMLCreateDevice create = (PFN_DMLCreateDevice)GetProcAddress(dml, "DMLCreateDevice");
    dml_release = (PFN_DMLDeviceRelease)GetProcAddress(dml, "DMLDeviceRelease");
    if (!create || !dml_release || create(NULL, 0, NULL, &g_dml_device) != S_OK) return 0;
    atexit(dml_session_release_device);
    return 1;
}
#elif defined(ENGINE_CUDNN)
typedef struct cudnnContext *cudnnHandle_t;
typedef int (*PFN_cudnnCreate)(cudnnHandle_t *);
typedef int (*PFN_cudnnDestroy)(cudnnHandle_t);
static PFN_cudnnDestroy cudnn_destroy;
static cudnnHandle_t g_cudnn;

NOINLINE static void conv_engine_destroy_handle(void)
{
    if (g_cudnn) cudnn_destroy(g_cudnn);
    g_cudnn = NULL;
}

__declspec(dllexport) int engine_init(void)
{
    HMODULE cudnn = LoadLibraryW(L"cudnn64_9.dll");
    if (!cudnn) return 0;
    PFN_cudnnCreate create = (PFN_cudnnCreate)GetProcAddress(cudnn, "cudnnCreate");
    cudnn_destroy = (PFN_cudnnDestroy)GetProcAddress(cudnn, "cudnnDestroy");
    if (!create || !cudnn_destroy || create(&g_cudnn) != 0) return 0;
    atexit(conv_engine_destroy_handle);
    return 1;
}
#else
#error "define ENGINE_DML or ENGINE_CUDNN"
#endif
