// node.exe stand-in: Node.js's start-up and tear-down path, and the part of
// Node-API (napi_wrap finalizers, environment cleanup hooks) a native addon
// relies on. Addons reach these napi_* functions in the host executable, as
// real addons do through Node's delay-load hook.
//
// Tear-down order, as in Node: FreeEnvironment -> Environment::RunCleanup runs
// the cleanup hooks in reverse order of registration. The Node-API environment
// registered its own hook (napi_env__::DeleteMe) when the addon was loaded;
// the addon registered its hook later, so the addon's hook runs first, and the
// napi_env's finalizers (RefTracker::FinalizeAll -> each wrapped object's
// finalize callback) run after it.
#include "../common/dtcommon.h"
#include "../common/cxxrt.inc"

typedef struct napi_env__ *napi_env;
typedef void *napi_value;
typedef void (*napi_finalize)(napi_env env, void *data, void *hint);
typedef void (*napi_cleanup_hook)(void *arg);
typedef int napi_status;

namespace v8impl {
class RefTracker {
  public:
    NOINLINE void Link(RefTracker **list)
    {
        next_ = *list;
        *list = this;
    }
    NOINLINE static void FinalizeAll(RefTracker **list);
    NOINLINE void Finalize() { finalize_cb_(env_, data_, hint_); }
    RefTracker *next_ = nullptr;
    napi_env env_ = nullptr;
    void *data_ = nullptr;
    void *hint_ = nullptr;
    napi_finalize finalize_cb_ = nullptr;
};

NOINLINE void RefTracker::FinalizeAll(RefTracker **list)
{
    while (*list) {
        RefTracker *r = *list;
        *list = r->next_;
        r->Finalize();
        delete r;
    }
}
} // namespace v8impl

namespace node {
class Environment;
}

struct napi_env__ {
    NOINLINE void DeleteMe();
    static void DeleteMeHook(void *arg) { ((napi_env__ *)arg)->DeleteMe(); }
    v8impl::RefTracker *finalizing_reflist = nullptr;
    node::Environment *node_env = nullptr;
};

NOINLINE void napi_env__::DeleteMe()
{
    // Finalize every object still wrapped at environment tear-down.
    v8impl::RefTracker::FinalizeAll(&finalizing_reflist);
}

namespace node {

struct CleanupHook {
    napi_cleanup_hook fn;
    void *arg;
};

class Environment {
  public:
    NOINLINE void AddCleanupHook(napi_cleanup_hook fn, void *arg)
    {
        hooks_[count_++] = CleanupHook{fn, arg};
    }
    NOINLINE void RunCleanup();
    CleanupHook hooks_[16];
    int count_ = 0;
};

NOINLINE void Environment::RunCleanup()
{
    while (count_ > 0) {
        CleanupHook h = hooks_[--count_]; // reverse order of insertion
        h.fn(h.arg);
    }
}

NOINLINE void FreeEnvironment(Environment *env)
{
    env->RunCleanup();
    delete env;
}

typedef napi_value (*napi_addon_register_func)(napi_env env, napi_value exports);
typedef void (*addon_script_fn)(napi_env env);

namespace binding {
NOINLINE void DLOpen(Environment *env, const wchar_t *path, napi_env *out_napi)
{
    HMODULE addon = LoadLibraryExW(path, nullptr, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!addon) ExitProcess(9);
    napi_env napi = new napi_env__();
    napi->node_env = env;
    env->AddCleanupHook(napi_env__::DeleteMeHook, napi);
    auto init = (napi_addon_register_func)GetProcAddress(addon, "napi_register_module_v1");
    init(napi, nullptr);
    *out_napi = napi;
}
} // namespace binding

static DWORD WINAPI platform_worker(LPVOID arg)
{
    dt_name_thread(GetCurrentThread(), (const wchar_t *)arg);
    for (;;) WaitForSingleObject(GetCurrentProcess(), INFINITE); // idle worker
    return 0;
}

NOINLINE static void SpinEventLoop(Environment *env) { (void)env; }

NOINLINE static void LoadEnvironment(Environment *env)
{
    // The user script:
    //   const ort = require('onnxruntime-node');
    //   const session = await ort.InferenceSession.create('model.onnx');
    //   ... run ...; the script ends with `session` still referenced.
    napi_env napi = nullptr;
    binding::DLOpen(env,
                    L"C:\\apps\\node\\node_modules\\onnxruntime-node\\bin\\napi-v6\\win32\\x64\\"
                    L"onnxruntime_binding.node",
                    &napi);
    HMODULE addon = GetModuleHandleW(L"onnxruntime_binding.node");
    auto script = (addon_script_fn)GetProcAddress(addon, "standin_run_user_script");
    script(napi);
}

class NodeMainInstance {
  public:
    NOINLINE int Run()
    {
        Environment *env = new Environment();
        LoadEnvironment(env);
        SpinEventLoop(env);
        FreeEnvironment(env);
        return 0;
    }
};

NOINLINE int Start(int argc, wchar_t **argv)
{
    (void)argc;
    (void)argv;
    CloseHandle(CreateThread(nullptr, 0, platform_worker, (LPVOID)L"v8-platform-worker-0", 0, nullptr));
    CloseHandle(CreateThread(nullptr, 0, platform_worker, (LPVOID)L"libuv-threadpool-0", 0, nullptr));
    NodeMainInstance main_instance;
    return main_instance.Run();
}
} // namespace node

// ------------------------------------------------------------- Node-API ----
extern "C" __declspec(dllexport) napi_status napi_wrap(napi_env env, napi_value js_object,
                                                       void *native_object, napi_finalize finalize_cb,
                                                       void *finalize_hint, void *result)
{
    (void)js_object;
    (void)result;
    auto *r = new v8impl::RefTracker();
    r->env_ = env;
    r->data_ = native_object;
    r->hint_ = finalize_hint;
    r->finalize_cb_ = finalize_cb;
    r->Link(&env->finalizing_reflist);
    return 0;
}

extern "C" __declspec(dllexport) napi_status napi_add_env_cleanup_hook(napi_env env,
                                                                       napi_cleanup_hook fun,
                                                                       void *arg)
{
    env->node_env->AddCleanupHook(fun, arg);
    return 0;
}

int wmain(int argc, wchar_t **argv)
{
    crashcap_install();
    return node::Start(argc, argv);
}
