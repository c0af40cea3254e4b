/* A lock-order deadlock at exit (issue 28): a worker takes the cache lock
 * and then wants the log lock; the atexit handler takes the log lock and
 * then wants the cache lock. Each holds what the other waits for. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t cache_held;

static void *cache_writer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&cache_lock);
    pthread_barrier_wait(&cache_held);
    usleep(100 * 1000); /* the exit handler takes the log lock meanwhile */
    pthread_mutex_lock(&log_lock);
    pthread_mutex_unlock(&log_lock);
    pthread_mutex_unlock(&cache_lock);
    return NULL;
}

static void flush_all(void) {
    pthread_mutex_lock(&log_lock);
    usleep(200 * 1000);
    pthread_mutex_lock(&cache_lock);
    pthread_mutex_unlock(&cache_lock);
    pthread_mutex_unlock(&log_lock);
}

int main(void) {
    pthread_t thread;
    pthread_barrier_init(&cache_held, NULL, 2);
    atexit(flush_all);
    pthread_create(&thread, NULL, cache_writer, NULL);
    pthread_barrier_wait(&cache_held);
    printf("exit_deadlock: work done\n");
    fflush(stdout);
    return 0;
}
