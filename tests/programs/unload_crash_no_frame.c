/* unload_crash.c where the stack walk cannot leave the unloaded code: the
 * atexit handler calls the dangling pointer with the frame-pointer register
 * holding what code built without frame pointers may leave there, a value
 * that reads as a frame record ending the stack (a null return address).
 * Without unwind information for the unmapped address, a walker that
 * trusts it stops at the top frame; only the return address the call left
 * at the stack pointer names the caller. The register is set on x86-64
 * only; elsewhere this is unload_crash.c. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void (*release_hook)(void);

__attribute__((noinline)) static void flush_plugin_cache(void)
{
    /* [0]: a "saved" frame pointer just above, [1]: a null return address. */
    volatile uintptr_t record[4] = { 0, 0, 0, 0 };
    record[0] = (uintptr_t)&record[2];
    fprintf(stderr, "unload_crash_no_frame: calling into the unloaded plugin\n");
    fflush(stderr);
#if defined(__x86_64__)
    __asm__ volatile("push %%rbp\n\t"
                     "mov %0, %%rbp\n\t"
                     "call *%1\n\t"
                     "pop %%rbp"
                     :
                     : "r"(record), "r"(release_hook)
                     : "memory", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
                       "r11");
#else
    (void)record;
    release_hook();
#endif
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "./libplugin.so";
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "unload_crash_no_frame: %s\n", dlerror());
        return 1;
    }
    release_hook = (void (*)(void))dlsym(plugin, "plugin_release");
    if (!release_hook) {
        fprintf(stderr, "unload_crash_no_frame: %s\n", dlerror());
        return 1;
    }
    atexit(flush_plugin_cache);
    dlclose(plugin);
    return 0;
}
