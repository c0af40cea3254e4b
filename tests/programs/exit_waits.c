/* Threads each blocked in one blocking call (named after it), and an atexit
 * handler that joins them: main returns and the process hangs at exit.
 * A "spinner" thread reads a non-blocking descriptor in a loop: it is busy,
 * never blocked. Each call is retried on EINTR, as real programs do:
 * stopping a process for a dump interrupts some calls (signal(7)). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RETRY(call) while ((call) < 0 && errno == EINTR)

static int pipe_fds[2];
static int busy_fds[2];
static int sockets[2];
static int listener;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t guard = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *in_poll(void *arg)
{
    struct pollfd p = {pipe_fds[0], POLLIN, 0};
    RETRY(poll(&p, 1, -1));
    return arg;
}

static void *in_ppoll(void *arg)
{
    struct pollfd p = {pipe_fds[0], POLLIN, 0};
    RETRY(ppoll(&p, 1, NULL, NULL));
    return arg;
}

static void *in_select(void *arg)
{
    fd_set set;
    do {
        FD_ZERO(&set);
        FD_SET(pipe_fds[0], &set);
    } while (select(pipe_fds[0] + 1, &set, NULL, NULL, NULL) < 0 && errno == EINTR);
    return arg;
}

static void *in_pselect(void *arg)
{
    fd_set set;
    do {
        FD_ZERO(&set);
        FD_SET(pipe_fds[0], &set);
    } while (pselect(pipe_fds[0] + 1, &set, NULL, NULL, NULL, NULL) < 0 && errno == EINTR);
    return arg;
}

static void *in_epoll_wait(void *arg)
{
    int e = epoll_create1(0);
    struct epoll_event event = {EPOLLIN, {0}};
    epoll_ctl(e, EPOLL_CTL_ADD, pipe_fds[0], &event);
    RETRY(epoll_wait(e, &event, 1, -1));
    return arg;
}

static void *in_nanosleep(void *arg)
{
    struct timespec t = {100000, 0};
    RETRY(nanosleep(&t, &t));
    return arg;
}

static void *in_clock_nanosleep(void *arg)
{
    struct timespec t = {100000, 0};
    /* Returns the error instead of setting errno. */
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t) == EINTR) {
    }
    return arg;
}

static void *in_read(void *arg)
{
    char c;
    RETRY(read(pipe_fds[0], &c, 1));
    return arg;
}

static void *in_recv(void *arg)
{
    char c;
    RETRY(recv(sockets[0], &c, 1, 0));
    return arg;
}

static void *in_accept(void *arg)
{
    RETRY(accept(listener, NULL, NULL));
    return arg;
}

static void *in_waitpid(void *arg)
{
    pid_t child = fork();
    if (child == 0) {
        /* The child ends with its parent. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    RETRY(waitpid(child, NULL, 0));
    return arg;
}

static void *in_sigwait(void *arg)
{
    sigset_t set;
    int signal;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    while (sigwait(&set, &signal) == EINTR) {
    }
    return arg;
}

static void *in_sigtimedwait(void *arg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    RETRY(sigtimedwait(&set, NULL, NULL));
    return arg;
}

static void *in_pause(void *arg)
{
    for (;;)
        pause();
    return arg;
}

static void *in_mutex(void *arg)
{
    pthread_mutex_lock(&held);
    return arg;
}

static void *in_condition(void *arg)
{
    pthread_mutex_lock(&guard);
    for (;;)
        pthread_cond_wait(&never, &guard);
    return arg;
}

static void *spinner(void *arg)
{
    char c;
    for (;;)
        if (read(busy_fds[0], &c, 1) > 0)
            break;
    return arg;
}

static const struct {
    const char *name;
    void *(*run)(void *);
} calls[] = {
    {"poll", in_poll},
    {"ppoll", in_ppoll},
    {"select", in_select},
    {"pselect", in_pselect},
    {"epoll_wait", in_epoll_wait},
    {"nanosleep", in_nanosleep},
    {"clock_nanosleep", in_clock_nanosleep},
    {"read", in_read},
    {"recv", in_recv},
    {"accept", in_accept},
    {"waitpid", in_waitpid},
    {"sigwait", in_sigwait},
    {"sigtimedwait", in_sigtimedwait},
    {"pause", in_pause},
    {"mutex", in_mutex},
    {"condition", in_condition},
    {"spinner", spinner},
};
#define COUNT (sizeof calls / sizeof *calls)
static pthread_t threads[COUNT];

static void join_all(void)
{
    fprintf(stderr, "exit_waits: joining at exit\n");
    for (unsigned i = 0; i < COUNT; i++)
        pthread_join(threads[i], NULL);
}

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_mutex_lock(&held);
    if (pipe(pipe_fds) || pipe(busy_fds) || socketpair(AF_UNIX, SOCK_STREAM, 0, sockets))
        return 1;
    fcntl(busy_fds[0], F_SETFL, O_NONBLOCK);
    listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {AF_UNIX, ""};
    /* An abstract address (Linux): nothing on disk. */
    snprintf(address.sun_path + 1, sizeof address.sun_path - 1, "exit_waits.%d", getpid());
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 1))
        return 1;
    for (unsigned i = 0; i < COUNT; i++) {
        pthread_create(&threads[i], NULL, calls[i].run, NULL);
        pthread_setname_np(threads[i], calls[i].name);
    }
    atexit(join_all);
    usleep(300000);
    return 0;
}
