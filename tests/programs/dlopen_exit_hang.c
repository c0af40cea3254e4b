/* Loads a plugin on a background thread and exits while it loads. The
 * plugin's constructor runs under glibc's loader lock (dl_load_lock) and
 * waits for an init thread of its own, which needs that lock for dlsym:
 * the loading thread never finishes, and exit's _dl_fini, which takes the
 * same lock to run the libraries' destructors, waits for it forever. Built
 * with -rdynamic so the plugin can call host_plugin_loading. */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t loading;

/* Called by the plugin's constructor. */
void host_plugin_loading(void)
{
    sem_post(&loading);
}

static void *plugin_loader(void *arg)
{
    void *plugin = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
    if (!plugin)
        fprintf(stderr, "dlopen_exit_hang: %s\n", dlerror());
    return plugin;
}

int main(int argc, char **argv)
{
    pthread_t loader;
    sem_init(&loading, 0, 0);
    pthread_create(&loader, NULL, plugin_loader, argc > 1 ? argv[1] : "./libslowinit.so");
    sem_wait(&loading);
    printf("work done\n");
    fprintf(stderr, "dlopen_exit_hang: exiting while the plugin loads\n");
    fflush(stderr);
    return 0;
}
