/* The benchmark program of scripts/bench-core.sh: THREADS worker threads
 * blocked on a condition variable, MB megabytes of heap written, then an
 * atexit handler that writes through a null pointer: a crash at exit
 * whose kernel core is as big and as threaded as a real GPU job's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int *volatile target;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;)
        pthread_cond_wait(&never, &lock);
    return NULL;
}

static void release_device(void)
{
    *target = 1; /* SIGSEGV while exiting */
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 100;
    size_t mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 4096;
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
    }
    for (size_t i = 0; i < mb; i++) {
        char *chunk = malloc(1 << 20);
        memset(chunk, (int)(i & 0xff) | 1, 1 << 20);
    }
    atexit(release_device);
    fprintf(stderr, "big_core: %d threads, %zu MB written; exiting\n", threads, mb);
    return 0;
}
