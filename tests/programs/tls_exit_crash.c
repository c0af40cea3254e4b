/* A per-thread cache registered with a global registry through a pthread
 * key: its destructor runs when the worker thread exits (glibc's
 * __nptl_deallocate_tsd) and tells the registry it is gone. At exit, the
 * program's atexit handler frees the registry first, then stops and joins
 * the worker: the worker's thread-local destructor uses the freed registry
 * (SIGSEGV on the worker thread while the main thread is in exit). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct registry {
    pthread_mutex_t lock;
    int caches;
};

struct cache {
    char data[256];
};

static struct registry *registry;
static pthread_key_t cache_key;
static pthread_t worker;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t state_changed = PTHREAD_COND_INITIALIZER;
static int worker_ready, stop_worker;

__attribute__((noinline)) static void registry_forget(struct cache *cache)
{
    (void)cache;
    pthread_mutex_lock(&registry->lock); /* registry is NULL at exit */
    registry->caches--;
    pthread_mutex_unlock(&registry->lock);
}

/* The pthread key's destructor: runs on the exiting thread. */
__attribute__((noinline)) static void cache_release(void *value)
{
    registry_forget(value);
    free(value);
}

static void *worker_main(void *arg)
{
    (void)arg;
    struct cache *cache = calloc(1, sizeof *cache);
    pthread_setspecific(cache_key, cache);
    pthread_mutex_lock(&registry->lock);
    registry->caches++;
    pthread_mutex_unlock(&registry->lock);

    pthread_mutex_lock(&state_lock);
    worker_ready = 1;
    pthread_cond_broadcast(&state_changed);
    while (!stop_worker)
        pthread_cond_wait(&state_changed, &state_lock);
    pthread_mutex_unlock(&state_lock);
    return NULL;
}

/* atexit handler: tears the registry down, then stops the worker. */
__attribute__((noinline)) static void shutdown_runtime(void)
{
    free(registry);
    registry = NULL;
    fprintf(stderr, "tls_exit_crash: registry freed, joining the worker\n");
    fflush(stderr);
    pthread_mutex_lock(&state_lock);
    stop_worker = 1;
    pthread_cond_broadcast(&state_changed);
    pthread_mutex_unlock(&state_lock);
    pthread_join(worker, NULL);
}

int main(void)
{
    registry = calloc(1, sizeof *registry);
    pthread_mutex_init(&registry->lock, NULL);
    pthread_key_create(&cache_key, cache_release);
    atexit(shutdown_runtime);
    pthread_create(&worker, NULL, worker_main, NULL);
    pthread_mutex_lock(&state_lock);
    while (!worker_ready)
        pthread_cond_wait(&state_changed, &state_lock);
    pthread_mutex_unlock(&state_lock);
    printf("work done\n");
    return 0;
}
