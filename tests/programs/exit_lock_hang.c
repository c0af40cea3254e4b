/* Hangs at exit on a lock (issue 28). With no argument, or "recursive" or
 * "robust", the worker takes the log mutex (of that type; a recursive one
 * twice) and sleeps in pause() forever; main returns, and the atexit
 * handler, flushing the log, waits for that mutex. With "semaphore", the
 * atexit handler waits for a semaphore nobody will post (no owner). */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t log_lock;
static pthread_barrier_t holding;
static sem_t flushed;
static int recursive;

static void *writer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&log_lock);
    if (recursive)
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

static void wait_for_flush(void) {
    sem_wait(&flushed);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "normal";
    if (strcmp(mode, "semaphore") == 0) {
        sem_init(&flushed, 0, 0);
        atexit(wait_for_flush);
    } else {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        recursive = strcmp(mode, "recursive") == 0;
        if (recursive)
            pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        if (strcmp(mode, "robust") == 0)
            pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&log_lock, &attr);
        pthread_t thread;
        pthread_barrier_init(&holding, NULL, 2);
        atexit(flush_log);
        pthread_create(&thread, NULL, writer, NULL);
        pthread_barrier_wait(&holding);
    }
    printf("exit_lock_hang: work done (%s)\n", mode);
    fflush(stdout);
    return 0;
}
