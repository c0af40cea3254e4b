// DirectML.dll stand-in: DMLCreateDevice hands out a device object; its
// Release returns the device's resources to the library's process-wide
// allocator, created when the DLL is loaded and destroyed by its
// DLL_PROCESS_DETACH (the pages returned to the OS).
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"

namespace dml {
struct Allocator {
    LONG liveDevices;
    unsigned long long bytesInUse;
};
static Allocator *g_allocator;

class Device {
  public:
    NOINLINE unsigned long Release();
    NOINLINE void FreeResources();
    LONG refs = 1;
};

NOINLINE void Device::FreeResources()
{
    g_allocator->bytesInUse = 0;
    InterlockedDecrement(&g_allocator->liveDevices);
}

NOINLINE unsigned long Device::Release()
{
    LONG left = InterlockedDecrement(&refs);
    if (left == 0) {
        FreeResources();
        delete this;
    }
    return (unsigned long)left;
}
} // namespace dml

extern "C" __declspec(dllexport) HRESULT DMLCreateDevice(void *d3d12Device, unsigned flags,
                                                         const void *riid, void **device)
{
    (void)d3d12Device;
    (void)flags;
    (void)riid;
    InterlockedIncrement(&dml::g_allocator->liveDevices);
    *device = new dml::Device();
    return S_OK;
}

// What IDMLDevice::Release reaches through the vtable; exported here because
// the stand-in's callers are C.
extern "C" __declspec(dllexport) unsigned long DMLDeviceRelease(void *device)
{
    return static_cast<dml::Device *>(device)->Release();
}

extern "C" BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID)
{
    if (reason == DLL_PROCESS_ATTACH)
        dml::g_allocator = (dml::Allocator *)dt_page_alloc(sizeof(dml::Allocator));
    else if (reason == DLL_PROCESS_DETACH)
        dt_page_free(dml::g_allocator);
    return TRUE;
}
