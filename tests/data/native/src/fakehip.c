/* A stand-in for a GPU runtime DLL (amdhip64.dll) whose teardown crashes at
 * process exit. Its functions have the underscore-heavy names real runtimes
 * use, so the tests can check that names survive exactly.
 * Built by scripts/native-fixtures.sh; the tests know its function offsets. */

static volatile int registered = 1;

/* Not exported: only debug information can name it. */
__attribute__((noinline)) static int __run_exit_handlers(int status) {
    registered = 0;
    return status * 3 + 1;
}

__declspec(dllexport) __attribute__((noinline)) void __hipUnregisterFatBinary(void **handle) {
    if (handle) {
        *handle = 0;
    }
    registered = __run_exit_handlers(registered);
}

__declspec(dllexport) __attribute__((noinline)) int hipStreamSynchronize(int stream) {
    int spins = 0;
    while (registered && spins < stream) {
        spins++;
    }
    return spins;
}

int __stdcall DllMain(void *instance, unsigned long reason, void *reserved) {
    (void)instance;
    (void)reserved;
    return reason != 0;
}
