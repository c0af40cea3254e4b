/* llamafile.exe stand-in: at start-up, before loading a model, llamafile asks
 * each GPU backend how many devices it has. The Vulkan backend (a DSO,
 * ggml-vulkan.dll) creates a Vulkan instance through the loader (vulkan-1.dll),
 * which calls into the installed ICD (amdvlk64.dll). On machines with the
 * loader but no working driver the ICD throws a C++ exception (0xE06D7363)
 * during instance creation; nothing on the way catches it.
 *
 * This is the in-process probe of llamafile 0.10.3 minus its signal-handler +
 * siglongjmp "recovery": the exception reaches the unhandled-exception filter
 * and the crash reporter records it, which is the moment the reported process
 * became corrupted. */
#include "../common/dtcommon.h"
#include <wchar.h>

typedef int (*PFN_get_device_count)(void);

static DWORD WINAPI log_thread(LPVOID arg)
{
    (void)arg;
    dt_name_thread(GetCurrentThread(), L"llamafile-log");
    for (;;) WaitForSingleObject(GetCurrentProcess(), INFINITE);
    return 0;
}

NOINLINE static int gpu_backend_probe(const wchar_t *dso, const char *count_symbol)
{
    HMODULE lib = LoadLibraryW(dso);
    if (!lib) return 0;
    PFN_get_device_count count = (PFN_get_device_count)GetProcAddress(lib, count_symbol);
    return count ? count() : 0;
}

NOINLINE static int llamafile_has_gpu(void)
{
    /* --gpu auto: try each backend in turn */
    int n = gpu_backend_probe(L"ggml-vulkan.dll", "ggml_backend_vk_get_device_count");
    return n > 0;
}

typedef int (*PFN_backend_init)(void);

/* --gpu vulkan on a machine whose GPU works: the Vulkan backend is
 * initialised, the model is served, and the program returns. */
NOINLINE static int llamafile_serve_on_vulkan(void)
{
    HMODULE lib = LoadLibraryW(L"ggml-vulkan.dll");
    if (!lib) return 2;
    PFN_backend_init init = (PFN_backend_init)GetProcAddress(lib, "ggml_backend_vk_init");
    if (!init || !init()) return 3;
    /* ... load the model, answer requests ... */
    return 0;
}

NOINLINE static int llamafile_main(int argc, wchar_t **argv)
{
    if (argc > 2 && !wcscmp(argv[1], L"--gpu") && !wcscmp(argv[2], L"vulkan"))
        return llamafile_serve_on_vulkan();
    CloseHandle(CreateThread(NULL, 0, log_thread, NULL, 0, NULL));
    int gpu = llamafile_has_gpu();
    /* ... load the model on GPU or CPU ... */
    return gpu ? 0 : 1;
}

int wmain(int argc, wchar_t **argv)
{
    crashcap_install();
    return llamafile_main(argc, argv);
}
