/* A JIT-built module: registers its fat binary with the CUDA runtime when it
 * loads, and (the bug) never unregisters it when it is unloaded. */
struct fatbin {
    int magic;
    int version;
    const char *image;
};

extern void **__cudaRegisterFatBinary(const void *fatbin);

static const struct fatbin kernels_fatbin = {0x466243b1, 1, "sm_75 kernels"};

__attribute__((constructor)) static void kernels_register(void)
{
    __cudaRegisterFatBinary(&kernels_fatbin);
}

int kernels_launch(void)
{
    return kernels_fatbin.version;
}
