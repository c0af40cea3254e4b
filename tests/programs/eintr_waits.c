/* Seven threads, each blocked for ever in one call that a stop can
 * interrupt: epoll_wait, select, poll, nanosleep, read (a pipe nobody
 * writes), pause and a futex wait. None retries on EINTR: when its call
 * returns, for any reason, the thread prints what it got and ends the
 * process with status 3. `main` joins them. A capture that lets a thread
 * run between stopping the process and writing the dump (issue 36) loses
 * the dump: the process is gone before it is written.
 *
 * With the argument `keep-going`, a thread whose call returns prints what
 * it got and calls it again instead, and three more threads wait in
 * epoll_pwait, sigtimedwait and recv on a socket with a receive timeout:
 * which calls a stop interrupts (what `attach` leaves behind) shows on
 * standard error. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipe_fds[2];
static int sockets[2];
static int epoll_fd;
static unsigned futex_word;
static int keep_going;

/* Reports a return; ends the process unless `keep-going`. */
static void returned(const char *call, long result)
{
    fprintf(stderr, "eintr_waits: %s returned %ld (%s)\n", call, result,
            result < 0 ? strerror(errno) : "no error");
    if (!keep_going)
        exit(3);
}

static void *wait_in_epoll(void *arg)
{
    struct epoll_event event;
    (void)arg;
    for (;;)
        returned("epoll_wait", epoll_wait(epoll_fd, &event, 1, -1));
    return NULL;
}

static void *wait_in_select(void *arg)
{
    fd_set readable;
    (void)arg;
    for (;;) {
        FD_ZERO(&readable);
        FD_SET(pipe_fds[0], &readable);
        returned("select", select(pipe_fds[0] + 1, &readable, NULL, NULL, NULL));
    }
    return NULL;
}

static void *wait_in_poll(void *arg)
{
    struct pollfd fd = {.fd = pipe_fds[0], .events = POLLIN};
    (void)arg;
    for (;;)
        returned("poll", poll(&fd, 1, -1));
    return NULL;
}

static void *wait_in_nanosleep(void *arg)
{
    struct timespec day = {.tv_sec = 86400, .tv_nsec = 0};
    (void)arg;
    for (;;)
        returned("nanosleep", nanosleep(&day, NULL));
    return NULL;
}

static void *wait_in_read(void *arg)
{
    char byte;
    (void)arg;
    for (;;)
        returned("read", read(pipe_fds[0], &byte, 1));
    return NULL;
}

static void *wait_in_pause(void *arg)
{
    (void)arg;
    for (;;)
        returned("pause", pause());
    return NULL;
}

static void *wait_in_futex(void *arg)
{
    (void)arg;
    for (;;)
        returned("futex", syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
    return NULL;
}

static void *wait_in_epoll_pwait(void *arg)
{
    struct epoll_event event;
    sigset_t none;
    (void)arg;
    sigemptyset(&none);
    for (;;)
        returned("epoll_pwait", epoll_pwait(epoll_fd, &event, 1, -1, &none));
    return NULL;
}

static void *wait_in_sigtimedwait(void *arg)
{
    sigset_t user1;
    struct timespec day = {.tv_sec = 86400, .tv_nsec = 0};
    (void)arg;
    sigemptyset(&user1);
    sigaddset(&user1, SIGUSR1);
    for (;;)
        returned("sigtimedwait", sigtimedwait(&user1, NULL, &day));
    return NULL;
}

static void *wait_in_recv(void *arg)
{
    char byte;
    struct timeval day = {.tv_sec = 86400, .tv_usec = 0};
    (void)arg;
    setsockopt(sockets[0], SOL_SOCKET, SO_RCVTIMEO, &day, sizeof day);
    for (;;)
        returned("recv (SO_RCVTIMEO)", recv(sockets[0], &byte, 1, 0));
    return NULL;
}

int main(int argc, char **argv)
{
    static void *(*const waits[])(void *) = {
        wait_in_epoll,      wait_in_select,       wait_in_poll, wait_in_nanosleep,
        wait_in_read,       wait_in_pause,        wait_in_futex,
        wait_in_epoll_pwait, wait_in_sigtimedwait, wait_in_recv,
    };
    static const char *const names[] = {"epoll",  "select", "poll",  "nanosleep",
                                        "read",   "pause",  "futex", "epoll_pwait",
                                        "sigwait", "recv"};
    enum { ALL = sizeof waits / sizeof waits[0], FIRST_SEVEN = 7 };
    pthread_t threads[ALL];
    keep_going = argc > 1 && strcmp(argv[1], "keep-going") == 0;
    int count = keep_going ? ALL : FIRST_SEVEN;
    sigset_t user1;
    sigemptyset(&user1);
    sigaddset(&user1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &user1, NULL);
    struct epoll_event event = {.events = EPOLLIN};
    if (pipe(pipe_fds) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) != 0)
        return 2;
    epoll_fd = epoll_create1(0);
    if (epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pipe_fds[0], &event) != 0)
        return 2;
    for (int i = 0; i < count; i++) {
        pthread_create(&threads[i], NULL, waits[i], NULL);
        pthread_setname_np(threads[i], names[i]);
    }
    fprintf(stderr, "eintr_waits: %d threads waiting\n", count);
    for (int i = 0; i < count; i++)
        pthread_join(threads[i], NULL);
    return 0;
}
