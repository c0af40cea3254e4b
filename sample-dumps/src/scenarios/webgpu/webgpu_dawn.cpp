// webgpu_dawn.dll stand-in: Dawn, Google's WebGPU implementation, as ONNX
// Runtime's WebGPU execution provider uses it (D3D12 backend on Windows).
//
// What matters for the samples:
//  * the D3D12 backend loads dxil.dll and dxcompiler.dll on first use and
//    creates a DXC compiler object, which the (instance-wide) Backend caches,
//    while the DLL handles are owned by the Device: destroying the device
//    FreeLibrary()s both DLLs, yet the instance still holds the compiler;
//    releasing the instance later calls into dxcompiler.dll code that is gone;
//  * with DAWN_BACKEND_OWNS_DXC set (how the dxc-exit scenario runs it), the
//    Backend opens the two DLLs itself and keeps them for the process, as
//    current Dawn does: nothing frees them, and at ExitProcess the loader
//    detaches them (they stay mapped) before the statics of the DLLs that
//    loaded earlier are destroyed, so the Backend's release of the compiler
//    runs dxcompiler.dll's code after its DLL_PROCESS_DETACH;
//  * destroying a device fires its device-lost callback (reason Destroyed),
//    which calls back into the embedder (ONNX Runtime).
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"

#define WGPU_EXPORT extern "C" __declspec(dllexport)

// IDxcCompiler as a COM object: a pointer to its vtable (in
// dxcompiler.dll), then the object's own data.
struct DxcCompilerObject;
struct IDxcCompilerVtbl {
    HRESULT (*QueryInterface)(DxcCompilerObject *self, const GUID *iid, void **out);
    ULONG (*AddRef)(DxcCompilerObject *self);
    ULONG (*Release)(DxcCompilerObject *self);
    HRESULT (*Compile)(DxcCompilerObject *self, const char *source);
};
struct DxcCompilerObject {
    const IDxcCompilerVtbl *lpVtbl;
    LONG refs;
};
typedef HRESULT(WINAPI *PFN_DxcCreateInstance)(const GUID *, const GUID *, void **);

enum WGPUDeviceLostReason { WGPUDeviceLostReason_Unknown = 1, WGPUDeviceLostReason_Destroyed = 2 };
typedef void (*WGPUDeviceLostCallback)(void *device, int reason, const char *message,
                                       void *userdata);

namespace dawn {
namespace native {

class DynamicLib {
  public:
    NOINLINE bool Open(const wchar_t *name)
    {
        m_handle = LoadLibraryW(name);
        return m_handle != nullptr;
    }
    NOINLINE void Close()
    {
        if (m_handle) FreeLibrary(m_handle);
        m_handle = nullptr;
    }
    NOINLINE void *GetProc(const char *name) { return (void *)GetProcAddress(m_handle, name); }
    HMODULE m_handle = nullptr;
};

namespace d3d12 {

class Backend {
  public:
    NOINLINE DxcCompilerObject *GetOrCreateDxcCompiler(DynamicLib &dxcompiler);
    NOINLINE ~Backend();
    DxcCompilerObject *mDxcCompiler = nullptr;
    // The libraries, when the Backend owns them (see the top of the file).
    DynamicLib mDxilLib;
    DynamicLib mDxcompilerLib;
    bool mOwnsLibraries = GetEnvironmentVariableW(L"DAWN_BACKEND_OWNS_DXC", nullptr, 0) != 0;
};

NOINLINE DxcCompilerObject *Backend::GetOrCreateDxcCompiler(DynamicLib &dxcompiler)
{
    if (!mDxcCompiler) {
        auto create = (PFN_DxcCreateInstance)dxcompiler.GetProc("DxcCreateInstance");
        create(nullptr, nullptr, (void **)&mDxcCompiler);
    }
    return mDxcCompiler;
}

NOINLINE Backend::~Backend()
{
    if (mDxcCompiler) {
        // dxcompiler.dll may be unloaded by now: the vtable read faults.
        mDxcCompiler->lpVtbl->Release(mDxcCompiler);
        mDxcCompiler = nullptr;
    }
}

class Device;
} // namespace d3d12

class InstanceBase {
  public:
    NOINLINE InstanceBase() { mBackend = new d3d12::Backend(); }
    NOINLINE ~InstanceBase() { delete mBackend; }
    NOINLINE void APIRelease()
    {
        if (InterlockedDecrement(&mRefs) == 0) delete this;
    }
    d3d12::Backend *mBackend;
    LONG mRefs = 1;
};

class DeviceBase {
  public:
    NOINLINE virtual ~DeviceBase() {}
    NOINLINE void APIRelease();
    NOINLINE void Destroy();
    NOINLINE void HandleDeviceLost(int reason, const char *message);
    virtual void DestroyImpl() = 0;
    WGPUDeviceLostCallback mLostCallback = nullptr;
    void *mLostUserdata = nullptr;
    LONG mRefs = 1;
    bool mDestroyed = false;
};

NOINLINE void DeviceBase::HandleDeviceLost(int reason, const char *message)
{
    if (mLostCallback) mLostCallback(this, reason, message, mLostUserdata);
}

NOINLINE void DeviceBase::Destroy()
{
    if (mDestroyed) return;
    mDestroyed = true;
    HandleDeviceLost(WGPUDeviceLostReason_Destroyed, "Device was destroyed.");
    DestroyImpl();
}

NOINLINE void DeviceBase::APIRelease()
{
    if (InterlockedDecrement(&mRefs) == 0) {
        Destroy();
        delete this;
    }
}

namespace d3d12 {
class Device : public DeviceBase {
  public:
    NOINLINE Device(InstanceBase *instance);
    NOINLINE void DestroyImpl() override;
    InstanceBase *mInstance;
    DynamicLib mDxilLib;
    DynamicLib mDxcompilerLib;
};

NOINLINE Device::Device(InstanceBase *instance) : mInstance(instance)
{
    // Shader compilation: DXIL validator first, then the compiler.
    d3d12::Backend *backend = mInstance->mBackend;
    DynamicLib &dxil = backend->mOwnsLibraries ? backend->mDxilLib : mDxilLib;
    DynamicLib &dxcompiler = backend->mOwnsLibraries ? backend->mDxcompilerLib : mDxcompilerLib;
    if (!dxil.m_handle) dxil.Open(L"dxil.dll");
    if (!dxcompiler.m_handle) dxcompiler.Open(L"dxcompiler.dll");
    DxcCompilerObject *dxc = backend->GetOrCreateDxcCompiler(dxcompiler);
    dxc->lpVtbl->Compile(dxc, "[numthreads(64,1,1)] void main() {}");
}

NOINLINE void Device::DestroyImpl()
{
    mDxcompilerLib.Close();
    mDxilLib.Close();
}
} // namespace d3d12

} // namespace native
} // namespace dawn

using dawn::native::DeviceBase;
using dawn::native::InstanceBase;

WGPU_EXPORT void *wgpuCreateInstance(const void *descriptor)
{
    (void)descriptor;
    return new InstanceBase();
}

WGPU_EXPORT void wgpuInstanceRelease(void *instance)
{
    static_cast<InstanceBase *>(instance)->APIRelease();
}

// Adapter and device request collapsed into one synchronous call.
WGPU_EXPORT void *wgpuInstanceCreateDevice(void *instance, WGPUDeviceLostCallback lost,
                                           void *userdata)
{
    auto *device = new dawn::native::d3d12::Device(static_cast<InstanceBase *>(instance));
    device->mLostCallback = lost;
    device->mLostUserdata = userdata;
    return device;
}

WGPU_EXPORT void wgpuDeviceRelease(void *device)
{
    static_cast<DeviceBase *>(device)->APIRelease();
}
