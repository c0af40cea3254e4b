// A thread_local work-stealing scheduler, the shape of parlaylib's: the
// first parallel call on a thread creates the scheduler and its workers;
// the scheduler's destructor, run by glibc's __call_tls_dtors when that
// thread ends (for the main thread: inside exit()), tells the workers to
// stop and joins them. One worker is still inside a job that waits for a
// result the main thread was to hand it after the loop, which it never
// does: it never sees the stop, and exit() waits in the join forever.
#include <pthread.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace parlay {

class scheduler {
public:
    scheduler()
    {
        for (int i = 0; i < 2; i++)
            workers.emplace_back([this, i] { worker(i); });
        std::unique_lock<std::mutex> guard(lock);
        changed.wait(guard, [this] { return started == 2; });
    }

    __attribute__((noinline)) ~scheduler()
    {
        {
            std::lock_guard<std::mutex> guard(lock);
            stop = true;
        }
        changed.notify_all();
        for (auto &w : workers)
            w.join();
    }

    // A job on worker 0 that waits for a value the submitting thread
    // hands over later.
    void run_waiting_job()
    {
        {
            std::lock_guard<std::mutex> guard(lock);
            job_pending = true;
        }
        changed.notify_all();
    }

private:
    __attribute__((noinline)) void wait_for_input()
    {
        std::unique_lock<std::mutex> guard(lock);
        changed.wait(guard, [this] { return input_ready; });
    }

    __attribute__((noinline)) void worker(int id)
    {
        pthread_setname_np(pthread_self(), "parlay-worker");
        {
            std::lock_guard<std::mutex> guard(lock);
            started++;
        }
        changed.notify_all();
        for (;;) {
            std::unique_lock<std::mutex> guard(lock);
            changed.wait(guard, [this] { return stop || job_pending; });
            if (job_pending && id == 0) {
                job_pending = false;
                guard.unlock();
                wait_for_input();
                continue;
            }
            if (stop)
                return;
        }
    }

    std::vector<std::thread> workers;
    std::mutex lock;
    std::condition_variable changed;
    int started = 0;
    bool stop = false;
    bool job_pending = false;
    bool input_ready = false;
};

__attribute__((noinline)) scheduler &get_scheduler()
{
    static thread_local scheduler instance;
    return instance;
}

} // namespace parlay

int main()
{
    parlay::get_scheduler().run_waiting_job();
    std::puts("tls_exit_hang: results written; exiting");
    std::fflush(stdout);
    return 0; // exit() -> __call_tls_dtors -> ~scheduler -> join: forever
}
