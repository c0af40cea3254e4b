/* hip_torch_app.exe: a program that imports the ROCm build of PyTorch as
 * Python does, with LoadLibrary (`import torch` loads torch_hip.dll), makes
 * one tensor on the GPU and returns. Exit hangs in torch_hip.dll's
 * DllMain(DLL_PROCESS_DETACH) (see torch_hip.c). */
#include <windows.h>

typedef int (*PFN_randn)(void);

__declspec(noinline) static int import_torch_and_randn(void)
{
    HMODULE torch = LoadLibraryW(L"torch_hip.dll");
    if (!torch) return 2;
    PFN_randn randn = (PFN_randn)GetProcAddress(torch, "torch_hip_randn");
    return randn ? randn() : 3;
}

int main(void)
{
    return import_torch_and_randn();
}
