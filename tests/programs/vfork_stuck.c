/* A thread that cannot be stopped for a while: it vforks, and a vfork parent
 * waits for its child in an uninterruptible (killable) sleep, state D, that
 * neither SIGSTOP nor PTRACE_INTERRUPT ends: the stand-in for a thread stuck
 * in a GPU driver call. The child sleeps SECONDS (first argument, default
 * 4) and exits. Meanwhile the main thread waits in main, or, with a second
 * argument `crash`, dereferences NULL.
 * Prints "vfork_stuck: child started" just before the vfork. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static unsigned seconds = 4;

static void *stuck(void *arg)
{
    (void)arg;
    fprintf(stderr, "vfork_stuck: child started\n");
    pid_t child = vfork();
    if (child == 0) {
        /* Only async-signal-safe calls in a vfork child: sleep is one. */
        sleep(seconds);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    fprintf(stderr, "vfork_stuck: child ended\n");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = (unsigned)atoi(argv[1]);
    pthread_t thread;
    pthread_create(&thread, NULL, stuck, NULL);
    if (argc > 2 && strcmp(argv[2], "crash") == 0) {
        usleep(300 * 1000);
        volatile int *null = NULL;
        *null = 1;
    }
    pthread_join(thread, NULL);
    pause();
    return 0;
}
