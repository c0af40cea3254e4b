/* A program built stripped (no symbols at all): `main` itself is an unnamed
 * frame of the executable, directly above the C library's start-up. With
 * "wait" it waits in main for ever, with a worker waiting too (a live process
 * that is not exiting); with "crash" it writes through a null pointer in main
 * (a crash that is not during exit). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;)
        pthread_cond_wait(&never, &lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        volatile int *nowhere = NULL;
        fprintf(stderr, "stripped_main: crashing in main\n");
        *nowhere = 1;
        return 0;
    }
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    fprintf(stderr, "stripped_main: waiting in main\n");
    pthread_mutex_lock(&lock);
    for (;;)
        pthread_cond_wait(&never, &lock);
}
