/* A stand-in for the HIP runtime (libamdhip64.so): at load it registers the
 * atexit handler __hipUnregisterFatBinary, which, like the real one, waits for
 * every stream of the device to drain. Nothing will ever drain them: the wait
 * never returns and the process hangs at exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void PalStartQueue(void);

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t streams_idle = PTHREAD_COND_INITIALIZER;
static int pending_work = 1;

__attribute__((noinline)) void SyncAllStreams(int wait_for_completion)
{
    pthread_mutex_lock(&streams_lock);
    while (wait_for_completion && pending_work)
        pthread_cond_wait(&streams_idle, &streams_lock);
    pthread_mutex_unlock(&streams_lock);
}

__attribute__((noinline)) void __hipUnregisterFatBinary(void)
{
    fprintf(stderr, "hip_exit_hang: hanging in exit\n");
    fflush(stderr);
    SyncAllStreams(1);
}

/* The program's first HIP call: starts the device queue (in libpal.so) and
 * registers the teardown handler, as __hipRegisterFatBinary does. */
int hipInit(unsigned int flags)
{
    (void)flags;
    PalStartQueue();
    atexit(__hipUnregisterFatBinary);
    return 0;
}
