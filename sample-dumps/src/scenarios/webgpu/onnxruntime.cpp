// onnxruntime.dll stand-in: the pieces of ONNX Runtime involved in the exit-time
// failures fixed by ONNX Runtime PR 27569, with ORT's own names:
//
//  * logging::LoggingManager owns the default logger; LOGS_DEFAULT goes through
//    LoggingManager::DefaultLogger() and a logging::Capture whose destructor
//    hands the message to Logger::Log. With no default logger registered,
//    DefaultLogger() throws (ORT_THROW: an OnnxRuntimeException, C++
//    exception 0xE06D7363); thrown through a destructor, which is noexcept,
//    the C++ runtime calls std::terminate, which calls abort().
//  * OrtEnv is the process-wide singleton ORT keeps as a raw pointer with a
//    reference count (OrtEnv::p_instance_): never destroyed by ORT's own DLL
//    detach, deleted by the ReleaseEnv that drops the last reference, and
//    with it the onnxruntime::Environment and its intra-op thread pool.
//  * The thread pool's per-worker run queues come from a process-wide block
//    cache, a file-scope static: ORT's DLL_PROCESS_DETACH destroys it and
//    returns the blocks to the system. A ReleaseEnv that comes after that
//    detach (a host's own static, destroyed later in ExitProcess) walks the
//    queues in freed memory, a dozen frames inside onnxruntime.dll.
//  * webgpu::WebGpuContextFactory keeps the WebGPU instance in a static RAII
//    wgpu::Instance (destroyed automatically at DLL unload, i.e. inside
//    DllMain(DLL_PROCESS_DETACH)) and the per-session contexts in a static map;
//    each context's device-lost callback logs through LOGS_DEFAULT.
//  * OrtTypeInfo objects are allocated from the environment's arena, so a
//    ReleaseTypeInfo after the environment is gone touches freed memory.
//  * A CPU kernel (contrib::MatMulNBits) that faults on a missing weight
//    buffer, used by the "crash during normal work" negative sample.
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"
#include "ort_api.h"
#include <stdio.h>
#include <string.h>

extern "C" {
__declspec(dllimport) void *wgpuCreateInstance(const void *descriptor);
__declspec(dllimport) void wgpuInstanceRelease(void *instance);
__declspec(dllimport) void *wgpuInstanceCreateDevice(void *instance,
                                                     void (*lost)(void *, int, const char *, void *),
                                                     void *userdata);
__declspec(dllimport) void wgpuDeviceRelease(void *device);
}

// ------------------------------------------------- C++ exception support --
// The stand-ins are built without C++ exceptions (see cxxrt.inc), so what an
// MSVC build's compiler and C++ runtime do is spelled out here:
//  * ORT_THROW raises 0xE06D7363 through _CxxThrowException with the
//    exception's ThrowInfo, laid out as MSVC emits it (constant .rdata,
//    image-relative offsets): onnxruntime::OnnxRuntimeException, catchable
//    as std::exception;
//  * when such an exception reaches a noexcept function (a destructor), the
//    frame handler calls std::terminate during dispatch; the vectored
//    handler below does that for the regions marked noexcept;
//  * std::terminate calls abort(), which raises SIGABRT (crash reporters
//    catch abort() there) and ends the process.
extern "C" __declspec(dllimport) void _CxxThrowException(void *object, const void *throw_info);
extern "C" NOINLINE void ort_exception_dtor(void *) {}
extern "C" const unsigned char ort_ti_OnnxRuntimeException[16];
asm(R"(
    .section .rdata,"dr"
    .p2align 3
ort_td_OnnxRuntimeException:
    .quad 0, 0
    .asciz ".?AVOnnxRuntimeException@onnxruntime@@"
    .p2align 3
ort_td_exception:
    .quad 0, 0
    .asciz ".?AVexception@std@@"
    .p2align 2
ort_ct_OnnxRuntimeException:
    .long 0
    .rva ort_td_OnnxRuntimeException
    .long 0, -1, 0, 160, 0
ort_ct_exception:
    .long 0
    .rva ort_td_exception
    .long 0, -1, 0, 160, 0
ort_cta_OnnxRuntimeException:
    .long 2
    .rva ort_ct_OnnxRuntimeException
    .rva ort_ct_exception
    .globl ort_ti_OnnxRuntimeException
ort_ti_OnnxRuntimeException:
    .long 0
    .rva ort_exception_dtor
    .long 0
    .rva ort_cta_OnnxRuntimeException
    .text
)");

namespace std {
[[noreturn]] NOINLINE void terminate() noexcept
{
    abort(); // the C runtime's: raise(SIGABRT), then the process ends
    __builtin_unreachable();
}

// The part of <memory> ORT's owners use (no libstdc++ in these modules).
template <class T> struct default_delete {
    NOINLINE void operator()(T *p) const { delete p; }
};
template <class T> class unique_ptr {
  public:
    unique_ptr() = default;
    explicit unique_ptr(T *p) : p_(p) {}
    unique_ptr(const unique_ptr &) = delete;
    NOINLINE ~unique_ptr()
    {
        if (p_) default_delete<T>()(p_);
    }
    T *get() const { return p_; }
    T *operator->() const { return p_; }

  private:
    T *p_ = nullptr;
};
} // namespace std

namespace onnxruntime {

class OnnxRuntimeException {
  public:
    const void *vftable = nullptr;
    char what_[152];
};

static OnnxRuntimeException g_thrown;

[[noreturn]] NOINLINE static void ThrowOnnxRuntimeException(const char *message)
{
    strncpy(g_thrown.what_, message, sizeof g_thrown.what_ - 1);
    _CxxThrowException(&g_thrown, ort_ti_OnnxRuntimeException);
    __builtin_unreachable();
}

// How deep the current thread is in functions the compiler marked noexcept
// (only the destructors on the exit path here).
static volatile LONG g_noexcept_depth;
struct NoexceptRegion {
    NoexceptRegion() { InterlockedIncrement(&g_noexcept_depth); }
    ~NoexceptRegion() { InterlockedDecrement(&g_noexcept_depth); }
};

NOINLINE static LONG CALLBACK NoexceptBoundary(EXCEPTION_POINTERS *ep)
{
    if (ep->ExceptionRecord->ExceptionCode == 0xE06D7363 && g_noexcept_depth > 0)
        std::terminate();
    return EXCEPTION_CONTINUE_SEARCH;
}

namespace logging {

enum class Severity { kVERBOSE = 0, kINFO = 1, kWARNING = 2, kERROR = 3, kFATAL = 4 };

class ISink {
  public:
    virtual ~ISink() {}
    virtual void SendImpl(const char *message) = 0;
};

class CLogSink : public ISink {
  public:
    NOINLINE void SendImpl(const char *message) override { (void)message; }
};

class Capture;

class Logger {
  public:
    Logger(ISink *sink, Severity min) : sink_(sink), min_severity_(min) {}
    // The default logger lives in its own pages (see dt_page_alloc).
    static void *operator new(size_t n) { return dt_page_alloc(n); }
    static void operator delete(void *p) { dt_page_free(p); }
    NOINLINE bool OutputIsEnabled(Severity s) const { return s >= min_severity_; }
    NOINLINE void Log(const Capture &message) const;
    ISink *sink_;
    Severity min_severity_;
    char id_[32] = "onnxruntime";
};

class Capture {
  public:
    NOINLINE Capture(const Logger &logger, Severity severity, const char *category)
        : logger_(&logger), severity_(severity), category_(category)
    {
        message_[0] = 0;
    }
    NOINLINE ~Capture() { logger_->Log(*this); }
    NOINLINE Capture &Stream(const char *text)
    {
        strncat(message_, text, sizeof(message_) - strlen(message_) - 1);
        return *this;
    }
    const Logger *logger_;
    Severity severity_;
    const char *category_;
    char message_[256];
};

NOINLINE void Logger::Log(const Capture &message) const
{
    if (OutputIsEnabled(message.severity_)) sink_->SendImpl(message.message_);
}

class LoggingManager {
  public:
    NOINLINE LoggingManager(Severity min)
    {
        s_default_logger_ = new Logger(&sink_, min);
    }
    NOINLINE ~LoggingManager()
    {
        delete s_default_logger_;
        s_default_logger_ = nullptr;
    }
    NOINLINE static const Logger &DefaultLogger()
    {
        if (s_default_logger_ == nullptr)
            ThrowOnnxRuntimeException("Attempt to use DefaultLogger but none has been registered.");
        return *s_default_logger_;
    }
    NOINLINE static bool HasDefaultLogger() { return s_default_logger_ != nullptr; }
    CLogSink sink_;
    static Logger *s_default_logger_;
};
Logger *LoggingManager::s_default_logger_ = nullptr;

} // namespace logging

#define LOGS_DEFAULT(sev)                                                                         \
    ::onnxruntime::logging::Capture(::onnxruntime::logging::LoggingManager::DefaultLogger(),      \
                                    ::onnxruntime::logging::Severity::k##sev, "onnxruntime")       \
        .Stream

// ------------------------------------------------------------ allocator ----
class BFCArena {
  public:
    static BFCArena *Create(size_t bytes)
    {
        void *pages = dt_page_alloc(bytes);
        BFCArena *a = new (pages) BFCArena();
        a->base_ = (char *)pages + sizeof(BFCArena);
        a->end_ = (char *)pages + bytes;
        a->next_ = a->base_;
        return a;
    }
    NOINLINE void *Alloc(size_t n)
    {
        char *p = next_;
        next_ += (n + 15) & ~(size_t)15;
        num_allocs_++;
        return p;
    }
    NOINLINE void Free(void *p)
    {
        (void)p;
        num_frees_++; // bookkeeping in the arena header
    }
    static void Destroy(BFCArena *a) { dt_page_free(a); }
    static void *operator new(size_t, void *where) { return where; }
    char *base_, *end_, *next_;
    size_t num_allocs_ = 0, num_frees_ = 0;
};

// ---------------------------------------------------------- thread pool ----
namespace concurrency {
// Process-wide cache of the aligned blocks the thread pools' run queues live
// in. A file-scope static: destroyed by ORT's DLL_PROCESS_DETACH, which
// returns every block to the system.
class RunQueueBlockCache {
  public:
    NOINLINE void *Get(size_t bytes)
    {
        void *block = dt_page_alloc(bytes);
        if (count_ < 16) blocks_[count_++] = block;
        return block;
    }
    NOINLINE ~RunQueueBlockCache()
    {
        for (int i = 0; i < count_; i++) dt_page_free(blocks_[i]);
        count_ = 0;
    }
    void *blocks_[16] = {};
    int count_ = 0;
};
static RunQueueBlockCache g_run_queue_blocks;

struct Task {
    void (*fn)(void *);
    void *arg;
};

// Eigen's RunQueue: a fixed-size ring of tasks owned by one worker.
template <typename Work, unsigned kSize> class RunQueue {
  public:
    static void *operator new(size_t n) { return g_run_queue_blocks.Get(n); }
    static void operator delete(void *) {} // the cache owns the block
    NOINLINE ~RunQueue() { Flush(); }
    NOINLINE unsigned Size() const { return back_ - front_; }
    NOINLINE bool Empty() const { return Size() == 0; }
    NOINLINE void PopBack() { back_--; }
    NOINLINE void Flush()
    {
        while (!Empty()) PopBack();
    }
    unsigned front_ = 0, back_ = 0;
    Work array_[kSize];
};

class ThreadPool {
  public:
    struct WorkerData {
        NOINLINE WorkerData() : queue(new RunQueue<Task, 1024>()) {}
        NOINLINE ~WorkerData() { delete queue; }
        RunQueue<Task, 1024> *queue;
    };
    NOINLINE ThreadPool(int threads);
    NOINLINE ~ThreadPool();
    NOINLINE void RunInParallel(void (*fn)(void *), void *arg);
    NOINLINE void WorkerLoop(int index);
    static DWORD WINAPI ThreadMain(LPVOID arg);
    HANDLE work_ready_, work_done_;
    void (*volatile fn_)(void *) = nullptr;
    void *arg_ = nullptr;
    WorkerData *worker_data_[4] = {};
    HANDLE threads_[4] = {};
    int num_workers_ = 0;
    volatile bool done_ = false;
};

struct WorkerStart {
    ThreadPool *pool;
    int index;
};

// As Eigen's pool does: tell the workers to stop, wake them, join them, then
// free their queues. Inside ExitProcess the system has already ended them, and
// the joins return at once.
NOINLINE ThreadPool::~ThreadPool()
{
    done_ = true;
    for (int i = 0; i < num_workers_; i++) SetEvent(work_ready_);
    for (int i = 0; i < num_workers_; i++) {
        WaitForSingleObject(threads_[i], INFINITE);
        CloseHandle(threads_[i]);
    }
    for (int i = 0; i < num_workers_; i++) delete worker_data_[i];
}

NOINLINE ThreadPool::ThreadPool(int threads)
{
    work_ready_ = CreateEventW(nullptr, FALSE, FALSE, nullptr);
    work_done_ = CreateEventW(nullptr, FALSE, FALSE, nullptr);
    for (int i = 1; i < threads && num_workers_ < 4; i++) {
        worker_data_[num_workers_] = new WorkerData();
        WorkerStart *ws = new WorkerStart{this, i};
        threads_[num_workers_++] = CreateThread(nullptr, 0, ThreadMain, ws, 0, nullptr);
    }
}

DWORD WINAPI ThreadPool::ThreadMain(LPVOID arg)
{
    WorkerStart *ws = (WorkerStart *)arg;
    wchar_t name[32];
    swprintf(name, 32, L"ort-intra-op-%d", ws->index);
    dt_name_thread(GetCurrentThread(), name);
    ws->pool->WorkerLoop(ws->index);
    return 0;
}

NOINLINE void ThreadPool::WorkerLoop(int index)
{
    (void)index;
    for (;;) {
        WaitForSingleObject(work_ready_, INFINITE);
        if (done_) return;
        fn_(arg_);
        SetEvent(work_done_);
    }
}

NOINLINE void ThreadPool::RunInParallel(void (*fn)(void *), void *arg)
{
    // Hand the work to the worker, then wait at the barrier for it to finish.
    fn_ = fn;
    arg_ = arg;
    SetEvent(work_ready_);
    WaitForSingleObject(work_done_, INFINITE);
}
} // namespace concurrency

// --------------------------------------------------------------- kernels ---
namespace contrib {
struct MatMulNBits {
    const unsigned char *packed_b_ = nullptr; // never prepacked: the bug
    size_t k_ = 4096, n_ = 4096;
    float *output_ = nullptr;
    NOINLINE int Compute();
};

NOINLINE int MatMulNBits::Compute()
{
    float acc = 0.f;
    for (size_t i = 0; i < 64; i++) acc += (float)packed_b_[(i * n_) + 0x40]; // reads NULL+...
    if (output_) output_[0] = acc;
    return 0;
}
} // namespace contrib

} // namespace onnxruntime

// ---------------------------------------------------------------- WebGPU ---
// webgpu_cpp.h's RAII wrapper (global namespace `wgpu`).
namespace wgpu {
class Instance {
  public:
    Instance() = default;
    NOINLINE ~Instance()
    {
        if (handle_) WGPURelease(handle_);
    }
    NOINLINE static void WGPURelease(void *h) { wgpuInstanceRelease(h); }
    void *handle_ = nullptr;
};
} // namespace wgpu

namespace onnxruntime {
namespace webgpu {

class WebGpuContext {
  public:
    NOINLINE WebGpuContext(void *instance);
    NOINLINE ~WebGpuContext();
    NOINLINE static void OnDeviceLost(void *device, int reason, const char *message, void *userdata);
    void *device_ = nullptr;
};

NOINLINE void WebGpuContext::OnDeviceLost(void *device, int reason, const char *message,
                                          void *userdata)
{
    (void)device;
    (void)reason;
    (void)userdata;
    // The device-lost callback as set up when the device is requested; not
    // guarded by LoggingManager::HasDefaultLogger().
    LOGS_DEFAULT(INFO)("WebGPU device lost: ").Stream(message);
}

NOINLINE WebGpuContext::WebGpuContext(void *instance)
{
    device_ = wgpuInstanceCreateDevice(instance, OnDeviceLost, this);
}

NOINLINE WebGpuContext::~WebGpuContext()
{
    NoexceptRegion noexcept_destructor; // destructors are noexcept
    if (device_) wgpuDeviceRelease(device_);
}

class WebGpuContextFactory {
  public:
    struct ContextMap {
        NOINLINE ~ContextMap()
        {
            for (auto &c : contexts) {
                delete c;
                c = nullptr;
            }
        }
        WebGpuContext *contexts[4] = {};
    };
    NOINLINE static WebGpuContext &CreateContext(int context_id);
    NOINLINE static void ReleaseContext(int context_id);
    static wgpu::Instance default_instance_;
    static ContextMap contexts_;
};

// Declaration order = construction order; destruction runs in reverse.
wgpu::Instance WebGpuContextFactory::default_instance_;
WebGpuContextFactory::ContextMap WebGpuContextFactory::contexts_;

NOINLINE WebGpuContext &WebGpuContextFactory::CreateContext(int context_id)
{
    if (!default_instance_.handle_) default_instance_.handle_ = wgpuCreateInstance(nullptr);
    if (!contexts_.contexts[context_id])
        contexts_.contexts[context_id] = new WebGpuContext(default_instance_.handle_);
    return *contexts_.contexts[context_id];
}

NOINLINE void WebGpuContextFactory::ReleaseContext(int context_id)
{
    delete contexts_.contexts[context_id];
    contexts_.contexts[context_id] = nullptr;
}
} // namespace webgpu

// ------------------------------------------------------------- sessions ----
class InferenceSession {
  public:
    NOINLINE InferenceSession(BFCArena *arena, concurrency::ThreadPool *pool)
        : arena_(arena), pool_(pool)
    {
    }
    NOINLINE int Initialize(int use_webgpu);
    NOINLINE int Run();
    NOINLINE ~InferenceSession();
    static void RunKernel(void *arg);
    BFCArena *arena_;
    concurrency::ThreadPool *pool_;
    int webgpu_context_id_ = -1;
    contrib::MatMulNBits matmul_;
};

NOINLINE int InferenceSession::Initialize(int use_webgpu)
{
    if (use_webgpu) {
        webgpu_context_id_ = 0;
        webgpu::WebGpuContextFactory::CreateContext(webgpu_context_id_);
    }
    return 0;
}

void InferenceSession::RunKernel(void *arg) { ((InferenceSession *)arg)->matmul_.Compute(); }

NOINLINE int InferenceSession::Run()
{
    if (webgpu_context_id_ >= 0) return 0; // kernels run on the GPU device
    // CPU execution provider: the kernel runs on the intra-op thread pool.
    pool_->RunInParallel(RunKernel, this);
    return 0;
}

NOINLINE InferenceSession::~InferenceSession()
{
    if (webgpu_context_id_ >= 0) webgpu::WebGpuContextFactory::ReleaseContext(webgpu_context_id_);
}

} // namespace onnxruntime

// ------------------------------------------------------------- Environment --
namespace onnxruntime {
class Environment {
  public:
    NOINLINE explicit Environment(logging::Severity level)
        : logging_manager_(new logging::LoggingManager(level)),
          intra_op_thread_pool_(new concurrency::ThreadPool(2))
    {
        arena_ = BFCArena::Create(1 << 16);
    }
    NOINLINE ~Environment() { BFCArena::Destroy(arena_); }
    // Members are destroyed in reverse order: the thread pool, then the
    // logging manager.
    std::unique_ptr<logging::LoggingManager> logging_manager_;
    std::unique_ptr<concurrency::ThreadPool> intra_op_thread_pool_;
    BFCArena *arena_ = nullptr;
};
} // namespace onnxruntime

// ------------------------------------------------------------------ OrtEnv --
struct OrtEnv {
    NOINLINE explicit OrtEnv(onnxruntime::Environment *value) : value_(value) {}
    NOINLINE ~OrtEnv() {}
    NOINLINE static OrtEnv *GetInstance(int level);
    NOINLINE static void Release(OrtEnv *env);
    onnxruntime::BFCArena *arena() const { return value_->arena_; }
    onnxruntime::concurrency::ThreadPool *intra_op_pool() const
    {
        return value_->intra_op_thread_pool_.get();
    }
    std::unique_ptr<onnxruntime::Environment> value_;
    // The single instance: a raw pointer, so no static destructor touches it.
    static OrtEnv *p_instance_;
    static int ref_count_;
};
OrtEnv *OrtEnv::p_instance_ = nullptr;
int OrtEnv::ref_count_ = 0;

NOINLINE OrtEnv *OrtEnv::GetInstance(int level)
{
    if (!p_instance_)
        p_instance_ = new OrtEnv(new onnxruntime::Environment((onnxruntime::logging::Severity)level));
    ++ref_count_;
    return p_instance_;
}

NOINLINE void OrtEnv::Release(OrtEnv *env)
{
    if (!env) return;
    if (--ref_count_ == 0) {
        delete p_instance_;
        p_instance_ = nullptr;
    }
}

struct OrtSession {
    onnxruntime::InferenceSession *impl;
    OrtEnv *env;
};

struct OrtTypeInfo {
    NOINLINE ~OrtTypeInfo() { arena->Free(this); }
    onnxruntime::BFCArena *arena;
    int onnx_type;
    long long shape[4];
};

namespace OrtApis {
NOINLINE OrtStatusPtr CreateEnv(int level, const char *logid, OrtEnv **out)
{
    (void)logid;
    *out = OrtEnv::GetInstance(level);
    return nullptr;
}
NOINLINE void ReleaseEnv(OrtEnv *env)
{
    if (env) OrtEnv::Release(env);
}
NOINLINE OrtStatusPtr CreateSession(OrtEnv *env, const wchar_t *model, int use_webgpu,
                                    OrtSession **out)
{
    (void)model;
    OrtSession *s = new OrtSession();
    s->env = env;
    s->impl = new onnxruntime::InferenceSession(env->arena(), env->intra_op_pool());
    s->impl->Initialize(use_webgpu);
    *out = s;
    return nullptr;
}
NOINLINE void ReleaseSession(OrtSession *s)
{
    if (!s) return;
    delete s->impl;
    delete s;
}
NOINLINE OrtStatusPtr Run(OrtSession *s)
{
    s->impl->Run();
    return nullptr;
}
NOINLINE OrtStatusPtr SessionGetInputTypeInfo(const OrtSession *s, size_t index, OrtTypeInfo **out)
{
    onnxruntime::BFCArena *arena = s->env->arena();
    OrtTypeInfo *ti = new (arena->Alloc(sizeof(OrtTypeInfo))) OrtTypeInfo();
    ti->arena = arena;
    ti->onnx_type = 1;
    ti->shape[0] = (long long)index + 1;
    *out = ti;
    return nullptr;
}
NOINLINE void ReleaseTypeInfo(OrtTypeInfo *ti)
{
    if (ti) ti->~OrtTypeInfo();
}
} // namespace OrtApis

static const OrtApi ort_api = {
    OrtApis::CreateEnv,   OrtApis::ReleaseEnv,
    OrtApis::CreateSession, OrtApis::ReleaseSession,
    OrtApis::Run,         OrtApis::SessionGetInputTypeInfo,
    OrtApis::ReleaseTypeInfo,
};

static const OrtApi *ORT_API_CALL_GetApi(unsigned version) { return version <= ORT_API_VERSION ? &ort_api : nullptr; }
static const char *GetVersionString() { return "1.22.0-standin"; }
static const OrtApiBase ort_api_base = {ORT_API_CALL_GetApi, GetVersionString};

extern "C" __declspec(dllexport) const OrtApiBase *OrtGetApiBase(void) { return &ort_api_base; }

extern "C" BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID)
{
    // The C++ runtime's part of exception dispatch (see NoexceptBoundary).
    if (reason == DLL_PROCESS_ATTACH) AddVectoredExceptionHandler(1, onnxruntime::NoexceptBoundary);
    return TRUE;
}
