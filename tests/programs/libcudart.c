/* A stand-in for the CUDA runtime's module registry: modules register their
 * fat binary when they load, and the runtime unregisters whatever is still
 * registered from its own exit-time handler. */
#include <stdio.h>
#include <stdlib.h>

#define MAX_MODULES 16

struct fatbin {
    int magic;
    int version;
    const char *image;
};

static const struct fatbin *registered[MAX_MODULES];
static int count;

__attribute__((noinline)) void **__cudaRegisterFatBinary(const void *fatbin)
{
    if (count < MAX_MODULES)
        registered[count++] = fatbin;
    return (void **)&registered[count - 1];
}

/* Reads the module's fat binary header: if the module was unloaded without
 * unregistering, that memory is gone. */
__attribute__((noinline)) void __cudaUnregisterFatBinary(void **handle)
{
    const struct fatbin *fb = *(const struct fatbin **)handle;
    volatile int magic = fb->magic;
    if (magic != 0x466243b1)
        fprintf(stderr, "libcudart: bad fat binary\n");
    *(const struct fatbin **)handle = NULL;
}

/* One device, as far as this stand-in knows. */
int cudaGetDeviceCount(int *count_out)
{
    *count_out = 1;
    return 0;
}

__attribute__((noinline)) static void cudart_teardown(void)
{
    for (int i = count - 1; i >= 0; i--)
        if (registered[i])
            __cudaUnregisterFatBinary((void **)&registered[i]);
}

__attribute__((constructor)) static void cudart_init(void)
{
    atexit(cudart_teardown);
}
