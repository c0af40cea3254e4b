/* cudnn64_9.dll stand-in: cuDNN handles belong to the library's context
 * list, created when the DLL is loaded and destroyed by its
 * DLL_PROCESS_DETACH (the pages returned to the OS). */
#include "../common/dtcommon.h"

typedef struct cudnnContext *cudnnHandle_t;
struct ContextList {
    LONG handles;
    void *streams[8];
};
static struct ContextList *g_contexts;

__declspec(dllexport) int cudnnCreate(cudnnHandle_t *handle)
{
    InterlockedIncrement(&g_contexts->handles);
    *handle = (cudnnHandle_t)g_contexts;
    return 0;
}

NOINLINE static void cudnn_release_streams(struct ContextList *list)
{
    for (int i = 0; i < 8; i++) list->streams[i] = NULL;
    InterlockedDecrement(&list->handles);
}

__declspec(dllexport) int cudnnDestroy(cudnnHandle_t handle)
{
    (void)handle;
    cudnn_release_streams(g_contexts);
    return 0;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH)
        g_contexts = (struct ContextList *)dt_page_alloc(sizeof *g_contexts);
    else if (reason == DLL_PROCESS_DETACH)
        dt_page_free(g_contexts);
    return TRUE;
}
