/* Hangs at exit on a mutex a worker holds (issue 28): the worker takes the
 * log mutex and sleeps in pause() forever; main returns, and the atexit
 * handler, flushing the log, waits for that mutex. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t holding;

static void *writer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&log_lock);
    pthread_barrier_wait(&holding);
    for (;;)
        pause();
    return NULL;
}

static void flush_log(void) {
    pthread_mutex_lock(&log_lock);
    pthread_mutex_unlock(&log_lock);
}

int main(void) {
    pthread_t thread;
    pthread_barrier_init(&holding, NULL, 2);
    atexit(flush_log);
    pthread_create(&thread, NULL, writer, NULL);
    pthread_barrier_wait(&holding);
    printf("exit_lock_hang: work done\n");
    fflush(stdout);
    return 0;
}
