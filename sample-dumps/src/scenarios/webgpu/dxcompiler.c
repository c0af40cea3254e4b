/* dxcompiler.dll stand-in (DirectX Shader Compiler). DxcCreateInstance hands
 * out a COM compiler object: its first field points at the class's vtable, a
 * constant table in this DLL's read-only data, whose entries point at code
 * inside this DLL. Once the DLL is unloaded, a call through the object
 * faults reading that vtable, in the caller.
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

typedef struct DxcCompilerObject DxcCompilerObject;
typedef struct IDxcCompilerVtbl {
    HRESULT (*QueryInterface)(DxcCompilerObject *self, const GUID *iid, void **out);
    ULONG (*AddRef)(DxcCompilerObject *self);
    ULONG (*Release)(DxcCompilerObject *self);
    HRESULT (*Compile)(DxcCompilerObject *self, const char *source);
} IDxcCompilerVtbl;

struct DxcCompilerObject {
    const IDxcCompilerVtbl *lpVtbl;
    LONG refs;
};

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

NOINLINE static HRESULT DxcCompiler_QueryInterface(DxcCompilerObject *self, const GUID *iid,
                                                   void **out)
{
    (void)iid;
    InterlockedIncrement(&self->refs);
    *out = self;
    return S_OK;
}

NOINLINE static ULONG DxcCompiler_AddRef(DxcCompilerObject *self)
{
    return (ULONG)InterlockedIncrement(&self->refs);
}

/* The class's vtable, in this DLL's read-only data. */
static const IDxcCompilerVtbl g_compiler_vtbl = {
    DxcCompiler_QueryInterface,
    DxcCompiler_AddRef,
    DxcCompiler_Release,
    DxcCompiler_Compile,
};

__declspec(dllexport) HRESULT DxcCreateInstance(const GUID *clsid, const GUID *iid, void **out)
{
    (void)clsid;
    (void)iid;
    DxcCompilerObject *c = (DxcCompilerObject *)calloc(1, sizeof(*c));
    c->lpVtbl = &g_compiler_vtbl;
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
