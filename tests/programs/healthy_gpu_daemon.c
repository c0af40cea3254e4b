/* A healthy GPU service: it initialises the HIP stand-in (whose PAL queue
 * thread then waits on a fence, as AMD runtimes' worker threads always do),
 * starts two named workers that wait for requests, and serves requests in a
 * poll() loop in main. Nothing is exiting: no exit-time signature may claim
 * a dump of it, though its threads wait in exactly the functions the GPU
 * hang signatures name. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int hipInit(unsigned int flags);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;

static void *request_worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;)
        pthread_cond_wait(&work, &lock);
    return NULL;
}

__attribute__((noinline)) static void serve_requests(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;)
        poll(&p, 1, 250);
}

int main(void)
{
    hipInit(0);
    for (int i = 0; i < 2; i++) {
        pthread_t t;
        char name[16];
        pthread_create(&t, NULL, request_worker, NULL);
        snprintf(name, sizeof name, "request-%d", i);
        pthread_setname_np(t, name);
    }
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    fprintf(stderr, "healthy_gpu_daemon: serving\n");
    fflush(stderr);
    serve_requests(fds[0]);
    return 0;
}
