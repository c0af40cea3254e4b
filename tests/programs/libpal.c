/* A stand-in for the AMD platform abstraction library: a queue thread that
 * waits on a fence the GPU never signals. */
#include <pthread.h>

static pthread_mutex_t fence_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fence_signalled = PTHREAD_COND_INITIALIZER;
static int fence_value = 0;

__attribute__((noinline)) void PalFenceWait(int value)
{
    pthread_mutex_lock(&fence_lock);
    while (fence_value < value)
        pthread_cond_wait(&fence_signalled, &fence_lock);
    pthread_mutex_unlock(&fence_lock);
}

static void *queue_thread(void *arg)
{
    (void)arg;
    PalFenceWait(1);
    return NULL;
}

void PalStartQueue(void)
{
    pthread_t thread;
    pthread_create(&thread, NULL, queue_thread, NULL);
    pthread_detach(thread);
}
