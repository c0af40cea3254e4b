/* Keeps a pointer into a plugin, unloads the plugin, then calls the pointer
 * from an atexit handler: a crash at exit in an unloaded module, the Linux
 * shape of "DXC used after dxcompiler.dll was unloaded". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void (*release_hook)(void);

static void run_release_hook(void)
{
    fprintf(stderr, "unload_crash: calling into the unloaded plugin\n");
    fflush(stderr);
    release_hook();
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "./libplugin.so";
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "unload_crash: %s\n", dlerror());
        return 1;
    }
    release_hook = (void (*)(void))dlsym(plugin, "plugin_release");
    if (!release_hook) {
        fprintf(stderr, "unload_crash: %s\n", dlerror());
        return 1;
    }
    atexit(run_release_hook);
    dlclose(plugin);
    printf("work done\n");
    return 0;
}
