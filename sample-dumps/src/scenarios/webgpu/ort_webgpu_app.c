/* ort_webgpu_app.exe: an application embedding ONNX Runtime with the WebGPU
 * execution provider (onnxruntime.dll -> webgpu_dawn.dll -> dxcompiler.dll /
 * dxil.dll). onnxruntime.dll is loaded at run time, as language bindings do.
 *
 *   --scenario dxc        create a WebGPU session, run, release the session,
 *                         return with the environment still alive (left to
 *                         static destruction, as interpreters do at exit)
 *   --scenario dxc-exit   the same with Dawn's Backend owning the DXC libraries
 *                         (nothing frees them): at ExitProcess they are
 *                         detached, not unmapped, before the WebGPU instance
 *                         is destroyed
 *   --scenario logger     create a WebGPU session, run, return with the
 *                         session alive; the environment is released from an
 *                         atexit handler (as a language binding's static is),
 *                         so the default logger is gone before ORT's own
 *                         statics (the WebGPU contexts) are destroyed
 *   --scenario work-crash create a CPU session and run it: a kernel faults on an
 *                         intra-op thread during normal work (negative sample)
 */
#include "../common/dtcommon.h"
#include "ort_api.h"
#include <stdlib.h>
#include <string.h>

static const OrtApi *g_ort;
static OrtEnv *g_env;

NOINLINE static void release_env_at_exit(void) { g_ort->ReleaseEnv(g_env); }

NOINLINE static const OrtApi *load_onnxruntime(void)
{
    HMODULE ort = LoadLibraryW(L"onnxruntime.dll");
    if (!ort) return NULL;
    PFN_OrtGetApiBase get_base = (PFN_OrtGetApiBase)GetProcAddress(ort, "OrtGetApiBase");
    return get_base()->GetApi(ORT_API_VERSION);
}

NOINLINE static int run_model(OrtEnv *env, int use_webgpu, int release_session)
{
    OrtSession *session = NULL;
    g_ort->CreateSession(env, L"C:\\apps\\ort\\models\\phi-mini-int4.onnx", use_webgpu, &session);
    g_ort->Run(session);
    if (release_session) g_ort->ReleaseSession(session);
    return 0;
}

int wmain(int argc, wchar_t **argv)
{
    crashcap_install();
    const wchar_t *scenario = argc > 2 ? argv[2] : L"dxc";
    if (!wcscmp(scenario, L"dxc-exit")) SetEnvironmentVariableW(L"DAWN_BACKEND_OWNS_DXC", L"1");
    g_ort = load_onnxruntime();
    if (!g_ort) return 2;
    OrtEnv *env = NULL;
    g_ort->CreateEnv(2 /* WARNING */, "ort_webgpu_app", &env);
    if (!wcscmp(scenario, L"dxc")) return run_model(env, 1, 1);
    if (!wcscmp(scenario, L"dxc-exit")) return run_model(env, 1, 1);
    if (!wcscmp(scenario, L"logger")) {
        g_env = env;
        atexit(release_env_at_exit);
        return run_model(env, 1, 0);
    }
    if (!wcscmp(scenario, L"work-crash")) return run_model(env, 0, 1);
    return 3;
}
