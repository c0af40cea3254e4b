/* Stand-in for libpython3.12.so: the interpreter's finalization waits in
 * wait_for_thread_shutdown (threading._shutdown) for every non-daemon
 * thread, with the names CPython's own functions have. The "script" starts
 * one non-daemon thread that blocks forever on a queue get, as a worker
 * thread the program forgot to stop does. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

typedef struct {
    sem_t sem;
} PyThread_type_lock;

static PyThread_type_lock queue_not_empty;   /* never released */
static PyThread_type_lock worker_tstate_lock; /* released when the worker ends */
static pthread_t worker;

__attribute__((noinline)) int PyThread_acquire_lock_timed(PyThread_type_lock *lock, long long microseconds, int intr_flag)
{
    (void)microseconds;
    (void)intr_flag;
    while (sem_wait(&lock->sem) != 0) {
    }
    return 1;
}

__attribute__((noinline)) static int acquire_timed(PyThread_type_lock *lock)
{
    return PyThread_acquire_lock_timed(lock, -1, 1);
}

__attribute__((noinline)) static int lock_PyThread_acquire_lock(PyThread_type_lock *lock)
{
    return acquire_timed(lock);
}

/* queue.get() in the worker; lock.acquire() in threading._shutdown. */
__attribute__((noinline)) int _PyEval_EvalFrameDefault(PyThread_type_lock *lock)
{
    return lock_PyThread_acquire_lock(lock);
}

__attribute__((noinline)) static void *thread_run(void *arg)
{
    (void)arg;
    _PyEval_EvalFrameDefault(&queue_not_empty);
    sem_post(&worker_tstate_lock.sem);
    return NULL;
}

__attribute__((noinline)) static void wait_for_thread_shutdown(void)
{
    fprintf(stderr, "python3: waiting for non-daemon threads at shutdown\n");
    fflush(stderr);
    _PyEval_EvalFrameDefault(&worker_tstate_lock);
}

__attribute__((noinline)) int Py_FinalizeEx(void)
{
    wait_for_thread_shutdown();
    return 0;
}

__attribute__((noinline)) static int pymain_run_python(void)
{
    sem_init(&queue_not_empty.sem, 0, 0);
    sem_init(&worker_tstate_lock.sem, 0, 0);
    pthread_create(&worker, NULL, thread_run, NULL);
    printf("work done\n");
    fflush(stdout);
    return 0;
}

__attribute__((noinline)) int Py_RunMain(void)
{
    int exitcode = pymain_run_python();
    if (Py_FinalizeEx() < 0)
        exitcode = 120;
    return exitcode;
}

int Py_BytesMain(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return Py_RunMain();
}
