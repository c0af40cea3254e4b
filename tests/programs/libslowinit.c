/* A plugin whose constructor starts an init thread and waits for it. The
 * init thread looks a symbol up with dlsym, which takes glibc's loader lock,
 * held by the dlopen that runs this constructor: the load never ends. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

void host_plugin_loading(void) __attribute__((weak));

static void *resolve_backend(void *arg)
{
    (void)arg;
    return dlsym(RTLD_DEFAULT, "backend_entry");
}

__attribute__((constructor)) static void slowinit_constructor(void)
{
    pthread_t init;
    if (host_plugin_loading)
        host_plugin_loading();
    pthread_create(&init, NULL, resolve_backend, NULL);
    pthread_join(init, NULL);
}

int slowinit_version(void)
{
    return 1;
}
