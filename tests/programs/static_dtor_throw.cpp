// A static object whose destructor throws at exit: destructors are noexcept,
// so the C++ runtime calls std::terminate, which aborts (SIGABRT) while glibc
// runs the exit handlers. The shape of "terminate called after throwing an
// instance of ..." printed after all the program's work was done.
#include <cstdio>
#include <stdexcept>
#include <string>

struct Journal {
    std::string path;
    bool dirty = false;

    explicit Journal(const char *p) : path(p) {}

    __attribute__((noinline)) void flush()
    {
        if (dirty)
            throw std::runtime_error("journal flush failed: " + path);
    }

    // Implicitly noexcept: an exception escaping it ends the process.
    __attribute__((noinline)) ~Journal()
    {
        std::fprintf(stderr, "static_dtor_throw: flushing the journal at exit\n");
        std::fflush(stderr);
        flush();
    }
};

static Journal journal("/nonexistent/journal.log");

int main()
{
    journal.dirty = true;
    std::printf("work done\n");
    return 0;
}
