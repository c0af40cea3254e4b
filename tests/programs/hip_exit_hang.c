/* Does its "GPU work", then exits: the HIP runtime's atexit handler hangs.
 *
 *   hip_exit_hang                   main returns; exit hangs on the main thread
 *   hip_exit_hang exit-from-thread  a worker thread calls exit and hangs there,
 *                                   while main waits for it in pthread_join */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hipInit(unsigned int flags);

static void *worker(void *arg)
{
    (void)arg;
    exit(0);
}

int main(int argc, char **argv)
{
    if (hipInit(0) != 0)
        return 1;
    printf("work done\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "exit-from-thread") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, worker, NULL);
        pthread_join(thread, NULL);
    }
    return 0;
}
