/* dxil.dll stand-in (DXIL validator/signer loaded next to dxcompiler.dll). */
#include "../common/dtcommon.h"

__declspec(dllexport) HRESULT DxcCreateInstance(const GUID *clsid, const GUID *iid, void **out)
{
    (void)clsid;
    (void)iid;
    *out = NULL;
    return E_NOINTERFACE;
}
