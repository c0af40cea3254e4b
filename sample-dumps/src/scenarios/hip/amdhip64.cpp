// Stand-in for AMD's HIP runtime on Windows (amdhip64_6.dll: CLR "hipamd" +
// "rocclr" on top of PAL, PAL being linked into the same DLL on Windows).
// There is no GPU here: a "submitted" command gets a PAL fence that only the
// (absent) hardware would signal, which is exactly the state the ROCm
// investigation describes: async GPU work still pending when the process exits.
//
// Function and class names follow clr/hipamd and PAL so that stacks read like
// the real ones: __hipUnregisterFatBinary -> hip::Device::SyncAllStreams(true),
// DllMain(DLL_PROCESS_DETACH) -> ihipDestroyDevice, Pal::Device::WaitForFences.
#include <windows.h>
#include <stdlib.h>
#include <stdio.h>

#define NOINLINE __declspec(noinline)
#define HIPAPI extern "C" __declspec(dllexport)

void *operator new(size_t n) { return calloc(1, n); }
void operator delete(void *p) noexcept { free(p); }
void operator delete(void *p, size_t) noexcept { free(p); }

typedef HRESULT(WINAPI *PFN_SetThreadDescription)(HANDLE, PCWSTR);
static void name_this_thread(const wchar_t *name)
{
    PFN_SetThreadDescription set = (PFN_SetThreadDescription)GetProcAddress(
        GetModuleHandleW(L"kernelbase.dll"), "SetThreadDescription");
    if (set) set(GetCurrentThread(), name);
}

// ---------------------------------------------------------------- PAL ------
namespace Pal {

// A GPU fence: signalled by the KMD when the GPU retires the submission.
class Fence {
  public:
    Fence() { m_event = CreateEventW(nullptr, TRUE, FALSE, nullptr); }
    HANDLE m_event;
    unsigned long long m_timestamp = 0;
};

class Device {
  public:
    NOINLINE int WaitForFences(unsigned count, Fence *const *fences, bool waitAll,
                               unsigned long long timeoutNs);
};

class Queue {
  public:
    explicit Queue(Device *dev) : m_device(dev) {}
    NOINLINE int Submit(Fence *fence);
    NOINLINE int WaitIdle();
    Device *m_device;
    Fence *m_lastFence = nullptr;
};

NOINLINE int Device::WaitForFences(unsigned count, Fence *const *fences, bool waitAll,
                                   unsigned long long timeoutNs)
{
    HANDLE handles[8];
    for (unsigned i = 0; i < count && i < 8; i++) handles[i] = fences[i]->m_event;
    DWORD ms = timeoutNs == ~0ull ? INFINITE : (DWORD)(timeoutNs / 1000000ull);
    if (count == 1) return (int)WaitForSingleObject(handles[0], ms);
    return (int)WaitForMultipleObjects(count, handles, waitAll, ms);
}

NOINLINE int Queue::Submit(Fence *fence)
{
    // The command buffer goes to the KMD; the fence is signalled on retirement.
    fence->m_timestamp++;
    m_lastFence = fence;
    return 0;
}

NOINLINE int Queue::WaitIdle()
{
    if (!m_lastFence) return 0;
    Fence *f = m_lastFence;
    return m_device->WaitForFences(1, &f, true, ~0ull);
}

} // namespace Pal

// --------------------------------------------------------------- rocclr ----
namespace amd {

class Monitor {
  public:
    Monitor() { m_event = CreateEventW(nullptr, FALSE, FALSE, nullptr); }
    NOINLINE void wait() { WaitForSingleObject(m_event, INFINITE); }
    NOINLINE void notify() { SetEvent(m_event); }
    HANDLE m_event;
};

namespace pal {
class VirtualGPU {
  public:
    VirtualGPU() : m_queue(&m_palDevice) {}
    NOINLINE void submitKernel(const void *kernel);
    NOINLINE void WaitForFence(Pal::Fence *fence);
    NOINLINE void waitAllEngines();
    NOINLINE void releaseMemory(void *ptr);
    Pal::Device m_palDevice;
    Pal::Queue m_queue;
    Pal::Fence m_fence;
};

NOINLINE void VirtualGPU::submitKernel(const void *kernel)
{
    (void)kernel;
    m_queue.Submit(&m_fence);
}

NOINLINE void VirtualGPU::WaitForFence(Pal::Fence *fence)
{
    Pal::Fence *const f = fence;
    m_palDevice.WaitForFences(1, &f, true, ~0ull);
}

NOINLINE void VirtualGPU::waitAllEngines() { m_queue.WaitIdle(); }

NOINLINE void VirtualGPU::releaseMemory(void *ptr)
{
    // hipFree is synchronous: the allocation may still be used by queued work.
    waitAllEngines();
    free(ptr);
}
} // namespace pal

struct Command {
    const void *kernel;
    Monitor done;
    volatile LONG completed = 0;
    NOINLINE void awaitCompletion()
    {
        while (!completed) done.wait();
    }
};

// One host thread per queue, as rocclr's HostQueue runs its own thread.
class HostQueue {
  public:
    HostQueue(int index, pal::VirtualGPU *gpu);
    ~HostQueue();
    NOINLINE void enqueue(Command *cmd);
    NOINLINE void finish(bool cpuWait);
    NOINLINE void loop();
    NOINLINE void terminate();
    static DWORD WINAPI threadEntry(LPVOID self);

    int m_index;
    pal::VirtualGPU *m_gpu;
    Monitor m_queueLock;      // signalled when a command arrives
    Monitor m_threadDone;     // signalled by the host thread when it leaves loop()
    Command *volatile m_pending = nullptr;
    Command *m_last = nullptr;
    volatile LONG m_stop = 0;
    HANDLE m_thread = nullptr;
};

HostQueue::HostQueue(int index, pal::VirtualGPU *gpu) : m_index(index), m_gpu(gpu)
{
    m_thread = CreateThread(nullptr, 0, threadEntry, this, 0, nullptr);
}

HostQueue::~HostQueue() { terminate(); }

DWORD WINAPI HostQueue::threadEntry(LPVOID self)
{
    HostQueue *q = (HostQueue *)self;
    wchar_t name[32];
    swprintf(name, 32, L"hip-worker-%d", q->m_index);
    name_this_thread(name);
    q->loop();
    return 0;
}

NOINLINE void HostQueue::loop()
{
    for (;;) {
        while (!m_pending && !m_stop) m_queueLock.wait();
        if (m_stop) break;
        Command *cmd = m_pending;
        m_pending = nullptr;
        // The launch was already dispatched to the GPU by the caller (direct
        // dispatch); the host thread waits for its fence, then completes it.
        m_gpu->WaitForFence(&m_gpu->m_fence);
        InterlockedExchange(&cmd->completed, 1);
        cmd->done.notify();
    }
    m_threadDone.notify();
}

NOINLINE void HostQueue::enqueue(Command *cmd)
{
    m_gpu->submitKernel(cmd->kernel); // direct dispatch on the caller's thread
    m_last = cmd;
    m_pending = cmd;
    m_queueLock.notify();
}

NOINLINE void HostQueue::finish(bool cpuWait)
{
    Command *last = m_last;
    if (!last) return;
    if (cpuWait) last->awaitCompletion();
}

NOINLINE void HostQueue::terminate()
{
    InterlockedExchange(&m_stop, 1);
    m_queueLock.notify();
    // Wait for the host thread to acknowledge. At ExitProcess the thread has
    // already been killed by the OS, so this acknowledgement never comes.
    m_threadDone.wait();
}

} // namespace amd

// ---------------------------------------------------------------- hipamd ---
namespace hip {

class Stream {
  public:
    Stream(int index) : m_queue(index, &m_gpu) {}
    amd::pal::VirtualGPU m_gpu;
    amd::HostQueue m_queue;
};

class Device {
  public:
    Device();
    ~Device();
    NOINLINE void SyncAllStreams(bool cpu_wait);
    Stream *m_nullStream;
    Stream *m_stream1;
};

Device::Device()
{
    m_nullStream = new Stream(0);
    m_stream1 = new Stream(1);
}

Device::~Device()
{
    delete m_stream1;
    delete m_nullStream;
}

NOINLINE void Device::SyncAllStreams(bool cpu_wait)
{
    m_nullStream->m_queue.finish(cpu_wait);
    m_stream1->m_queue.finish(cpu_wait);
}

} // namespace hip

static hip::Device *g_devices[1];
static int g_current_device = -1;
static volatile LONG g_unregister_once = 0; // std::call_once in the original

NOINLINE static hip::Device *getCurrentDevice()
{
    if (g_current_device < 0) return nullptr;
    return g_devices[g_current_device];
}

NOINLINE void ihipDestroyDevice()
{
    for (auto &d : g_devices) {
        if (d) {
            delete d;
            d = nullptr;
        }
    }
}

// ------------------------------------------------------------- public API --
struct FatBinaryHandle {
    const void *image;
    int functions;
};

HIPAPI int hipSetDevice(int id)
{
    if (id != 0) return 101; // hipErrorInvalidDevice
    if (!g_devices[0]) g_devices[0] = new hip::Device();
    g_current_device = 0;
    return 0;
}

HIPAPI int hipMalloc(void **ptr, size_t size)
{
    *ptr = calloc(1, size ? size : 1);
    return *ptr ? 0 : 2;
}

HIPAPI int hipLaunchKernel(const void *function, unsigned gridX, unsigned blockX, void **args,
                           size_t sharedMem, void *stream)
{
    (void)gridX;
    (void)blockX;
    (void)args;
    (void)sharedMem;
    hip::Device *dev = getCurrentDevice();
    if (!dev) return 100;
    amd::Command *cmd = new amd::Command();
    cmd->kernel = function;
    hip::Stream *s = stream ? (hip::Stream *)stream : dev->m_nullStream;
    s->m_queue.enqueue(cmd);
    return 0; // asynchronous, like the real launch
}

HIPAPI int hipStreamSynchronize(void *stream)
{
    hip::Device *dev = getCurrentDevice();
    if (!dev) return 100;
    hip::Stream *s = stream ? (hip::Stream *)stream : dev->m_nullStream;
    s->m_queue.finish(true);
    return 0;
}

HIPAPI int hipDeviceSynchronize(void)
{
    hip::Device *dev = getCurrentDevice();
    if (dev) dev->SyncAllStreams(true);
    return 0;
}

HIPAPI int hipFree(void *ptr)
{
    hip::Device *dev = getCurrentDevice();
    if (dev) dev->m_nullStream->m_gpu.releaseMemory(ptr);
    return 0;
}

HIPAPI void **__hipRegisterFatBinary(const void *data)
{
    FatBinaryHandle *h = new FatBinaryHandle();
    h->image = data;
    return (void **)h;
}

HIPAPI void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                  const char *deviceName, unsigned threadLimit, void *tid,
                                  void *bid, void *blockDim, void *gridDim, int *wSize)
{
    (void)hostFunction;
    (void)deviceFunction;
    (void)deviceName;
    (void)threadLimit;
    (void)tid;
    (void)bid;
    (void)blockDim;
    (void)gridDim;
    (void)wSize;
    ((FatBinaryHandle *)modules)->functions++;
}

NOINLINE static void unregister_device_sync()
{
    for (auto *hipDevice : g_devices) {
        if (hipDevice) hipDevice->SyncAllStreams(true); // CPU wait: blocks here
    }
}

// As in clr/hipamd/src/hip_platform.cpp: the first unregistration waits for
// every stream of every device before the code objects are released.
HIPAPI void __hipUnregisterFatBinary(void **modules)
{
    if (InterlockedCompareExchange(&g_unregister_once, 1, 0) == 0) unregister_device_sync();
    delete (FatBinaryHandle *)modules;
}

// As in clr/hipamd/src/hip_runtime.cpp on Windows: process detach only calls
// ihipDestroyDevice() (RuntimeTearDown is compiled out on _WIN32).
extern "C" BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID reserved)
{
    if (reason == DLL_PROCESS_DETACH && reserved != nullptr) {
        // reserved != NULL: the process is terminating (ExitProcess).
        ihipDestroyDevice();
    }
    return TRUE;
}
