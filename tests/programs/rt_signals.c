/* Real-time signals under `dumptriage run`: a program that handles
 * SIGRTMIN and SIGRTMIN+3, sent to itself from two threads, then exits with
 * the number it received. A tracer that cannot pass real-time signals on
 * leaves it stopped for ever. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t received;

static void on_signal(int sig)
{
    (void)sig;
    received++;
}

static void *sender(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++)
        kill(getpid(), SIGRTMIN + 3);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGRTMIN, &sa, NULL);
    sigaction(SIGRTMIN + 3, &sa, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, sender, NULL);
    for (int i = 0; i < 50; i++)
        raise(SIGRTMIN);
    pthread_join(thread, NULL);
    while (received < 2)
        usleep(1000);
    fprintf(stderr, "rt_signals: received real-time signals\n");
    return 7;
}
