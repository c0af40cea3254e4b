/* Loads a JIT-compiled CUDA module, uses it and unloads it; at exit the CUDA
 * runtime's teardown unregisters the module's fat binary, whose memory went
 * with the module: SIGSEGV in __cudaUnregisterFatBinary, after all work is
 * done (cuda-runtime-teardown-at-exit). */
#include <dlfcn.h>
#include <stdio.h>

extern int cudaGetDeviceCount(int *count);

int main(void)
{
    int devices = 0;
    cudaGetDeviceCount(&devices);
    printf("%d CUDA device(s)\n", devices);
    void *module = dlopen("./libkernels.so", RTLD_NOW);
    if (!module) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    int (*launch)(void) = (int (*)(void))dlsym(module, "kernels_launch");
    printf("kernels returned %d\n", launch());
    dlclose(module);
    fprintf(stderr, "cuda_exit_crash: exiting\n");
    return 0;
}
