// onnxruntime_binding.node stand-in: ONNX Runtime's Node.js addon (js/node/src)
// in the two shapes ONNX Runtime PR 27569 dealt with. Which one runs is chosen
// by the environment variable ORT_NODE_STANDIN_ENV (the stand-in's own switch):
//
//  * unset: the PR's first version, before its review round.
//    OrtSingletonData owns the OrtEnv; it is released from a Node-API
//    environment cleanup hook when Node exits. InferenceSessionWrap (an
//    ObjectWrap) owns the session and the input/output Ort::TypeInfo objects.
//    Its destructor, run by the N-API finalizer at environment tear-down,
//    skips the session once the env is gone but still destroys
//    inputTypes_/outputTypes_, whose Ort::TypeInfo destructor calls
//    OrtApi::ReleaseTypeInfo into onnxruntime.dll after the env was torn down.
//  * "function-static": the binding before the PR. The Ort::Env is a
//    function-local static, so its destructor is in this module's onexit
//    table and runs from its DLL_PROCESS_DETACH inside ExitProcess. The
//    addon delay-loads onnxruntime.dll (the first call through the import
//    loads it), so ORT initialised after the addon and the loader detaches
//    it first: by the time the static's ReleaseEnv reaches ORT, ORT's own
//    statics are gone, and the crash is deep inside onnxruntime.dll, with the
//    release tens of frames below it under LdrShutdownProcess.
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"
#include "../webgpu/ort_api.h"
#include <wchar.h>

typedef struct napi_env__ *napi_env;
typedef void *napi_value;
typedef void (*napi_finalize)(napi_env env, void *data, void *hint);
typedef void (*napi_cleanup_hook)(void *arg);
typedef int (*PFN_napi_wrap)(napi_env, napi_value, void *, napi_finalize, void *, void *);
typedef int (*PFN_napi_add_env_cleanup_hook)(napi_env, napi_cleanup_hook, void *);

// ----------------------------------------------------- delay-load import --
// What the linker's delay-load helper does for `/DELAYLOAD:onnxruntime.dll`,
// reduced to the one import: load onnxruntime.dll from the addon's own folder
// on the first call, then call through the resolved address.
static HMODULE g_onnxruntime;

NOINLINE static FARPROC delay_load_onnxruntime(const char *name)
{
    if (!g_onnxruntime) {
        HMODULE self = nullptr;
        GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                               GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                           (LPCWSTR)&delay_load_onnxruntime, &self);
        wchar_t path[MAX_PATH];
        DWORD n = GetModuleFileNameW(self, path, MAX_PATH);
        while (n > 0 && path[n - 1] != L'\\') n--;
        path[n] = 0;
        wcsncat(path, L"onnxruntime.dll", MAX_PATH - n - 1);
        g_onnxruntime = LoadLibraryExW(path, nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
        if (!g_onnxruntime) ExitProcess(9);
    }
    return GetProcAddress(g_onnxruntime, name);
}

static const OrtApiBase *OrtGetApiBase(void)
{
    return ((PFN_OrtGetApiBase)delay_load_onnxruntime("OrtGetApiBase"))();
}

// Node-API entry points live in the host executable (node.exe).
static PFN_napi_wrap p_napi_wrap;
static PFN_napi_add_env_cleanup_hook p_napi_add_env_cleanup_hook;
static void resolve_node_api()
{
    HMODULE host = GetModuleHandleW(nullptr);
    p_napi_wrap = (PFN_napi_wrap)GetProcAddress(host, "napi_wrap");
    p_napi_add_env_cleanup_hook =
        (PFN_napi_add_env_cleanup_hook)GetProcAddress(host, "napi_add_env_cleanup_hook");
}

namespace Ort {
NOINLINE const OrtApi &GetApi()
{
    static const OrtApi *api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    return *api;
}
namespace detail {
NOINLINE void OrtRelease(OrtTypeInfo *ptr) { GetApi().ReleaseTypeInfo(ptr); }
NOINLINE void OrtRelease(OrtSession *ptr) { GetApi().ReleaseSession(ptr); }
NOINLINE void OrtRelease(OrtEnv *ptr) { GetApi().ReleaseEnv(ptr); }

template <typename T> struct Base {
    Base() = default;
    explicit Base(T *p) : p_(p) {}
    NOINLINE ~Base() { OrtRelease(p_); }
    T *release()
    {
        T *p = p_;
        p_ = nullptr;
        return p;
    }
    T *p_ = nullptr;
};
} // namespace detail

struct TypeInfo : detail::Base<OrtTypeInfo> {
    TypeInfo() = default;
    explicit TypeInfo(OrtTypeInfo *p) : Base(p) {}
};
struct Session : detail::Base<OrtSession> {
    explicit Session(OrtSession *p) : Base(p) {}
};
struct Env : detail::Base<OrtEnv> {
    NOINLINE Env(int level, const char *logid) { GetApi().CreateEnv(level, logid, &p_); }
};
} // namespace Ort

// The binding before PR 27569: the environment as a function-local static.
NOINLINE static Ort::Env &FunctionLocalEnv()
{
    static Ort::Env env(2, "onnxruntime-node");
    return env;
}

static bool EnvIsFunctionStatic()
{
    wchar_t mode[32];
    DWORD n = GetEnvironmentVariableW(L"ORT_NODE_STANDIN_ENV", mode, 32);
    return n > 0 && n < 32 && !wcscmp(mode, L"function-static");
}

struct OrtSingletonData {
    struct OrtObjects {
        OrtEnv *env = nullptr;
    };
    NOINLINE static OrtObjects *GetOrCreateOrtObjects(napi_env env);
    NOINLINE static OrtObjects *GetOrtObjects() { return ort_objects_; }
    NOINLINE static void ReleaseOrtObjects(void *arg);
    static OrtObjects *ort_objects_;
};
OrtSingletonData::OrtObjects *OrtSingletonData::ort_objects_ = nullptr;

NOINLINE OrtSingletonData::OrtObjects *OrtSingletonData::GetOrCreateOrtObjects(napi_env env)
{
    if (!ort_objects_ && EnvIsFunctionStatic()) {
        ort_objects_ = new OrtObjects();
        ort_objects_->env = FunctionLocalEnv().p_; // destroyed at this DLL's detach
    } else if (!ort_objects_) {
        ort_objects_ = new OrtObjects();
        Ort::GetApi().CreateEnv(2, "onnxruntime-node", &ort_objects_->env);
        // Released when Node.js starts to exit (main thread).
        p_napi_add_env_cleanup_hook(env, ReleaseOrtObjects, nullptr);
    }
    return ort_objects_;
}

NOINLINE void OrtSingletonData::ReleaseOrtObjects(void *)
{
    Ort::GetApi().ReleaseEnv(ort_objects_->env);
    delete ort_objects_;
    ort_objects_ = nullptr;
}

class InferenceSessionWrap {
  public:
    NOINLINE InferenceSessionWrap(napi_env env);
    NOINLINE ~InferenceSessionWrap();
    NOINLINE void LoadModel(const wchar_t *path);
    napi_env env_;
    Ort::Session *session_ = nullptr;
    Ort::TypeInfo inputTypes_[1];
    Ort::TypeInfo outputTypes_[1];
};

NOINLINE InferenceSessionWrap::InferenceSessionWrap(napi_env env) : env_(env) {}

NOINLINE void InferenceSessionWrap::LoadModel(const wchar_t *path)
{
    OrtEnv *env = OrtSingletonData::GetOrCreateOrtObjects(env_)->env;
    OrtSession *s = nullptr;
    Ort::GetApi().CreateSession(env, path, 0, &s);
    session_ = new Ort::Session(s);
    OrtTypeInfo *ti = nullptr;
    Ort::GetApi().SessionGetInputTypeInfo(s, 0, &ti);
    inputTypes_[0].p_ = ti;
    Ort::GetApi().SessionGetInputTypeInfo(s, 1, &ti);
    outputTypes_[0].p_ = ti;
}

NOINLINE InferenceSessionWrap::~InferenceSessionWrap()
{
    if (!OrtSingletonData::GetOrtObjects()) {
        // The env is gone (exit): leak the session rather than release it.
        if (session_) session_->release();
    }
    delete session_;
    // inputTypes_ / outputTypes_ are destroyed here, unconditionally.
}

namespace Napi {
template <typename T> struct ObjectWrap {
    NOINLINE static void FinalizeCallback(napi_env env, void *data, void *hint)
    {
        (void)env;
        (void)hint;
        delete static_cast<T *>(data);
    }
};
} // namespace Napi

extern "C" __declspec(dllexport) napi_value napi_register_module_v1(napi_env env, napi_value exports)
{
    (void)env;
    resolve_node_api();
    return exports;
}

// The JavaScript side of the user script, collapsed into one native call:
// InferenceSession.create(path) -> new InferenceSessionWrap + LoadModel.
extern "C" __declspec(dllexport) void standin_run_user_script(napi_env env)
{
    auto *wrap = new InferenceSessionWrap(env);
    p_napi_wrap(env, nullptr, wrap, Napi::ObjectWrap<InferenceSessionWrap>::FinalizeCallback, nullptr,
                nullptr);
    wrap->LoadModel(L"C:\\apps\\node\\model.onnx");
}
