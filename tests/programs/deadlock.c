/* Two worker threads take two mutexes in opposite orders and deadlock
 * during normal work; main waits for them forever. A hang that is not at
 * exit: `run --hang-timeout` must still count it (issue 30, part 2). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static void *worker_a(void *arg) {
    (void)arg;
    pthread_mutex_lock(&first);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&second);
    return NULL;
}

static void *worker_b(void *arg) {
    (void)arg;
    pthread_mutex_lock(&second);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&first);
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_barrier_init(&both_hold_one, NULL, 2);
    pthread_create(&a, NULL, worker_a, NULL);
    pthread_create(&b, NULL, worker_b, NULL);
    printf("deadlock: workers started\n");
    fflush(stdout);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
