/* A stand-in for a Linux shared library whose exit path hangs. Built by
 * scripts/native-fixtures.sh with a GNU build id; its debug information is
 * split into a separate file, as Debian's -dbg packages ship it. */

static volatile int pending = 1;

/* Not exported (hidden): only debug information can name it. */
__attribute__((noinline, visibility("hidden"))) int __run_exit_handlers(int status) {
    pending = 0;
    return status * 3 + 1;
}

__attribute__((noinline)) void __cxa_finalize_streams(void *dso) {
    if (dso) {
        pending = __run_exit_handlers(pending);
    }
}

__attribute__((noinline)) int _wait_for_streams(int limit) {
    int spins = 0;
    while (pending && spins < limit) {
        spins++;
    }
    return spins;
}
