/*
 * capture.exe - out-of-process minidump capture, in the manner of
 * `procdump -x` / a CI watchdog: start a program, give it a fixed time, and if
 * it has not exited by then, OpenProcess() its PID, read the facts Wine's
 * writer leaves out (sidecar) and the memory of the wait objects (dtmemory.c),
 * call MiniDumpWriteDump() on it, then kill it.
 *
 *   capture.exe <after-ms> <dump-path> <sidecar-path> <program> [args...]
 *
 * Exit code: 0 when a dump was written, 2 when the program exited before the
 * deadline (no hang), 1 on any other failure.
 */
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>
#include <wchar.h>
#include "dtcollect.h"
#include "dtmemory.h"

/* Rebuild a command line from argv[first..] with simple quoting. */
static void join_args(int argc, wchar_t **argv, int first, wchar_t *out, size_t cap)
{
    out[0] = 0;
    for (int i = first; i < argc; i++) {
        if (i > first) wcsncat(out, L" ", cap - wcslen(out) - 1);
        int quote = wcschr(argv[i], L' ') != NULL;
        if (quote) wcsncat(out, L"\"", cap - wcslen(out) - 1);
        wcsncat(out, argv[i], cap - wcslen(out) - 1);
        if (quote) wcsncat(out, L"\"", cap - wcslen(out) - 1);
    }
}

int wmain(int argc, wchar_t **argv)
{
    if (argc < 5) {
        fwprintf(stderr, L"usage: capture.exe <after-ms> <dump> <sidecar> <program> [args...]\n");
        return 1;
    }
    DWORD after_ms = (DWORD)_wtoi(argv[1]);
    const wchar_t *dump_path = argv[2];
    const wchar_t *sidecar_path = argv[3];
    static wchar_t cmd[8192];
    join_args(argc, argv, 4, cmd, 8192);

    STARTUPINFOW si;
    PROCESS_INFORMATION pi;
    ZeroMemory(&si, sizeof(si));
    si.cb = sizeof(si);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
        fwprintf(stderr, L"capture: cannot start %ls (%lu)\n", cmd, GetLastError());
        return 1;
    }
    DWORD pid = pi.dwProcessId;
    CloseHandle(pi.hThread);
    if (WaitForSingleObject(pi.hProcess, after_ms) == WAIT_OBJECT_0) {
        DWORD code = 0;
        GetExitCodeProcess(pi.hProcess, &code);
        fwprintf(stderr, L"capture: pid %lu exited with 0x%08lx before %lu ms: nothing to dump\n",
                 pid, code, after_ms);
        return 2;
    }
    CloseHandle(pi.hProcess);

    /* As procdump does: open the hung process by its id. */
    HANDLE proc = OpenProcess(PROCESS_ALL_ACCESS, FALSE, pid);
    if (!proc) {
        fwprintf(stderr, L"capture: OpenProcess(%lu) failed (%lu)\n", pid, GetLastError());
        return 1;
    }
    fwprintf(stderr, L"capture: pid %lu still running after %lu ms, dumping\n", pid, after_ms);
    if (dtcollect_write_sidecar(proc, pid, sidecar_path, "out-of-process-openprocess")) {
        fwprintf(stderr, L"capture: cannot write sidecar %ls\n", sidecar_path);
    }
    /* The memory the wait analysis reads (Wine's writer keeps only stacks). */
    dtmemory_write(proc, pid, sidecar_path);
    HANDLE file = CreateFileW(dump_path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                              FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE) {
        fwprintf(stderr, L"capture: cannot create %ls (%lu)\n", dump_path, GetLastError());
        TerminateProcess(proc, 1);
        return 1;
    }
    BOOL ok = MiniDumpWriteDump(proc, pid, file, MiniDumpNormal, NULL, NULL, NULL);
    DWORD err = GetLastError();
    CloseHandle(file);
    /* Like a CI watchdog: the hung process is killed afterwards. */
    TerminateProcess(proc, 1);
    WaitForSingleObject(proc, 5000);
    CloseHandle(proc);
    if (!ok) {
        fwprintf(stderr, L"capture: MiniDumpWriteDump failed (%lu)\n", err);
        return 1;
    }
    fwprintf(stderr, L"capture: wrote %ls\n", dump_path);
    return 0;
}
