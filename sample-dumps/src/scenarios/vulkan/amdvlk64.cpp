// amdvlk64.dll stand-in: AMD's Vulkan ICD (XGL on top of PAL). Instance creation
// initialises the PAL platform; with no supported GPU present the driver throws
// a C++ exception out of vkCreateInstance. The throw goes through the C++
// runtime's _CxxThrowException (msvcrt), which raises SEH exception 0xE06D7363
// with the four MSVC parameters (magic 0x19930520, object, ThrowInfo, image
// base); the ThrowInfo tables below are laid out as MSVC emits them on x64
// (image-relative offsets), describing a std::runtime_error.
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"
#include <string.h>

extern "C" __declspec(dllimport) void _CxxThrowException(void *object, const void *throw_info);

namespace {
struct runtime_error {
    const void *vftable;
    const char *what;
    char storage[96];
};
} // namespace

// The exception's type tables, laid out as MSVC emits them on x64: constant
// data in .rdata whose references are image-relative offsets (.rva), so the
// thrown type can be read from the binary (TypeDescriptor name
// ".?AVruntime_error@std@@", catchable as std::runtime_error and
// std::exception).
extern "C" NOINLINE void amdvlk_runtime_error_dtor(void *) {}
extern "C" const unsigned char amdvlk_ti_runtime_error[16];
asm(R"(
    .section .rdata,"dr"
    .p2align 3
amdvlk_td_runtime_error:
    .quad 0, 0
    .asciz ".?AVruntime_error@std@@"
    .p2align 3
amdvlk_td_exception:
    .quad 0, 0
    .asciz ".?AVexception@std@@"
    .p2align 2
amdvlk_ct_runtime_error:
    .long 0
    .rva amdvlk_td_runtime_error
    .long 0, -1, 0, 112, 0
amdvlk_ct_exception:
    .long 0
    .rva amdvlk_td_exception
    .long 0, -1, 0, 112, 0
amdvlk_cta_runtime_error:
    .long 2
    .rva amdvlk_ct_runtime_error
    .rva amdvlk_ct_exception
    .globl amdvlk_ti_runtime_error
amdvlk_ti_runtime_error:
    .long 0
    .rva amdvlk_runtime_error_dtor
    .long 0
    .rva amdvlk_cta_runtime_error
    .text
)");

namespace Pal {
enum class Result { Success = 0, ErrorUnavailable = -5, ErrorIncompatibleDevice = -12 };
NOINLINE Result EnumerateDevices(unsigned *count)
{
    // No supported adapter, unless the scenario gives the process one
    // (vkcube.exe, a machine whose GPU works).
    *count = GetEnvironmentVariableW(L"DT_GPU_PRESENT", nullptr, 0) ? 1 : 0;
    return Result::Success;
}

// Command submission: the queue reads the command buffer's chunk list. A
// command buffer the application already freed points at released pages.
struct CmdStreamChunk {
    unsigned long long gpuVa;
    unsigned dwords;
};
struct CmdBuffer {
    CmdStreamChunk *chunks;
    unsigned chunkCount;
};
class Queue {
  public:
    NOINLINE Result SubmitChunks(const CmdBuffer *cmd);
    NOINLINE Result Submit(const CmdBuffer *const *cmds, unsigned count);
    unsigned long long m_submitted = 0;
};
NOINLINE Result Queue::SubmitChunks(const CmdBuffer *cmd)
{
    for (unsigned i = 0; i < cmd->chunkCount; i++) m_submitted += cmd->chunks[i].dwords;
    return Result::Success;
}
NOINLINE Result Queue::Submit(const CmdBuffer *const *cmds, unsigned count)
{
    for (unsigned i = 0; i < count; i++) SubmitChunks(cmds[i]);
    return Result::Success;
}
NOINLINE Result CreatePlatform(unsigned *device_count)
{
    EnumerateDevices(device_count);
    return *device_count ? Result::Success : Result::ErrorUnavailable;
}
// The driver's process-wide platform: created when the DLL is loaded,
// destroyed by its DLL_PROCESS_DETACH (its pages returned to the OS).
struct Platform {
    unsigned long long deviceMemoryBudget;
    unsigned liveDevices;
};
static Platform *g_platform;

class Device {
  public:
    NOINLINE void Destroy();
};
NOINLINE void Device::Destroy()
{
    // Returns the device's memory to the platform's budget.
    g_platform->liveDevices--;
    g_platform->deviceMemoryBudget += 1ull << 30;
}
} // namespace Pal

namespace vk {

static runtime_error g_error_object;

[[noreturn]] NOINLINE static void ThrowPalError(Pal::Result r)
{
    g_error_object.vftable = nullptr;
    strcpy(g_error_object.storage, "Pal::CreatePlatform failed: no compatible GPU adapter");
    g_error_object.what = g_error_object.storage;
    (void)r;
    _CxxThrowException(&g_error_object, amdvlk_ti_runtime_error);
    __builtin_unreachable();
}

class Instance {
  public:
    NOINLINE int Init();
    NOINLINE static int Create(const void *create_info, void **out);
    unsigned m_deviceCount = 0;
};

NOINLINE int Instance::Init()
{
    Pal::Result r = Pal::CreatePlatform(&m_deviceCount);
    if (r != Pal::Result::Success) ThrowPalError(r); // escapes vkCreateInstance
    return 0;
}

NOINLINE int Instance::Create(const void *create_info, void **out)
{
    (void)create_info;
    Instance *inst = new Instance();
    inst->Init();
    *out = inst;
    return 0;
}

static Pal::Queue g_queue;

namespace entry {
// VkSubmitInfo reduced to what the driver reads here.
struct SubmitInfo {
    unsigned commandBufferCount;
    const Pal::CmdBuffer *const *pCommandBuffers;
};
static Pal::Device g_device;

NOINLINE void vkDestroyDevice(void *device, const void *allocator)
{
    (void)device;
    (void)allocator;
    g_device.Destroy();
}
NOINLINE int vkQueueSubmit(void *queue, unsigned count, const SubmitInfo *submits, void *fence)
{
    (void)queue;
    (void)fence;
    for (unsigned i = 0; i < count; i++)
        g_queue.Submit(submits[i].pCommandBuffers, submits[i].commandBufferCount);
    return 0;
}
NOINLINE int vkCreateInstance(const void *create_info, const void *allocator, void **out)
{
    (void)allocator;
    return Instance::Create(create_info, out);
}
} // namespace entry
} // namespace vk

extern "C" __declspec(dllexport) void *vk_icdGetInstanceProcAddr(void *instance, const char *name)
{
    (void)instance;
    if (!strcmp(name, "vkCreateInstance")) return (void *)vk::entry::vkCreateInstance;
    if (!strcmp(name, "vkQueueSubmit")) return (void *)vk::entry::vkQueueSubmit;
    if (!strcmp(name, "vkDestroyDevice")) return (void *)vk::entry::vkDestroyDevice;
    return nullptr;
}

extern "C" __declspec(dllexport) int vk_icdNegotiateLoaderICDInterfaceVersion(unsigned *version)
{
    if (*version > 5) *version = 5;
    return 0;
}

extern "C" BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID)
{
    if (reason == DLL_PROCESS_ATTACH) {
        Pal::g_platform = (Pal::Platform *)dt_page_alloc(sizeof(Pal::Platform));
        Pal::g_platform->liveDevices = 1;
    } else if (reason == DLL_PROCESS_DETACH) {
        dt_page_free(Pal::g_platform); // Pal::Platform::Destroy
    }
    return TRUE;
}
