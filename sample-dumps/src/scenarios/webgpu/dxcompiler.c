/* dxcompiler.dll stand-in (DirectX Shader Compiler). DxcCreateInstance hands
 * out a compiler object; as in a C ABI, the object carries its method pointers,
 * which point at code inside this DLL. Once the DLL is unloaded those pointers
 * lead into unmapped memory. */
#include "../common/dtcommon.h"
#include <stdlib.h>

typedef struct DxcCompilerObject {
    ULONG(*Release)(struct DxcCompilerObject *self);
    HRESULT (*Compile)(struct DxcCompilerObject *self, const char *source);
    LONG refs;
} DxcCompilerObject;

NOINLINE static ULONG DxcCompiler_Release(DxcCompilerObject *self)
{
    LONG left = InterlockedDecrement(&self->refs);
    if (!left) free(self);
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
