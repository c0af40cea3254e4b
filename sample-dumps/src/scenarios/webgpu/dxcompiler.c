/* dxcompiler.dll stand-in (DirectX Shader Compiler). DxcCreateInstance hands
 * out a compiler object; as in a C ABI, the object carries its method pointers,
 * which point at code inside this DLL. Once the DLL is unloaded those pointers
 * lead into unmapped memory.
 *
 * Like DXC, every entry point works under the module's default allocator,
 * installed for the call with DxcSwapThreadMalloc; DllMain's
 * DLL_PROCESS_DETACH destroys it (DxcCleanupThreadMalloc). At ExitProcess the
 * DLL is detached but stays mapped: an object released after that runs this
 * code against the destroyed allocator. */
#include "../common/dtcommon.h"
#include <stdlib.h>

typedef struct DxcMalloc {
    void *(*Alloc)(SIZE_T size);
    void (*Free)(void *p);
} DxcMalloc;

static DxcMalloc *g_default_malloc;
static DxcMalloc *t_thread_malloc; /* per thread in DXC; one thread here */

static void *dxc_alloc(SIZE_T size) { return calloc(1, size); }
static void dxc_free(void *p) { free(p); }

NOINLINE static DxcMalloc *DxcSwapThreadMalloc(DxcMalloc *malloc_in)
{
    DxcMalloc *previous = t_thread_malloc;
    /* Checks the allocator it is given, as DXC's does (AddRef). */
    if (malloc_in->Alloc == NULL) return previous;
    t_thread_malloc = malloc_in;
    return previous;
}

NOINLINE static void DxcCleanupThreadMalloc(void)
{
    dt_page_free(g_default_malloc); /* the pages go back to the OS */
    /* g_default_malloc still points at them: DLL_PROCESS_DETACH is last. */
}

typedef struct DxcCompilerObject {
    ULONG(*Release)(struct DxcCompilerObject *self);
    HRESULT (*Compile)(struct DxcCompilerObject *self, const char *source);
    LONG refs;
} DxcCompilerObject;

NOINLINE static ULONG DxcCompiler_Release(DxcCompilerObject *self)
{
    DxcMalloc *previous = DxcSwapThreadMalloc(g_default_malloc);
    LONG left = InterlockedDecrement(&self->refs);
    if (!left) free(self);
    t_thread_malloc = previous;
    return (ULONG)left;
}

NOINLINE static HRESULT DxcCompiler_Compile(DxcCompilerObject *self, const char *source)
{
    (void)self;
    return source ? S_OK : E_INVALIDARG;
}

__declspec(dllexport) HRESULT DxcCreateInstance(const GUID *clsid, const GUID *iid, void **out)
{
    (void)clsid;
    (void)iid;
    DxcCompilerObject *c = (DxcCompilerObject *)calloc(1, sizeof(*c));
    c->Release = DxcCompiler_Release;
    c->Compile = DxcCompiler_Compile;
    c->refs = 1;
    *out = c;
    return S_OK;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH) {
        g_default_malloc = (DxcMalloc *)dt_page_alloc(sizeof(DxcMalloc));
        g_default_malloc->Alloc = dxc_alloc;
        g_default_malloc->Free = dxc_free;
    } else if (reason == DLL_PROCESS_DETACH) {
        DxcCleanupThreadMalloc();
    }
    return TRUE;
}
