/*
 * crashcap.dll - a minimal in-process crash reporter, standing in for the
 * Breakpad/Crashpad/Sentry client a real application would embed.
 *
 * crashcap_install() registers:
 *   1. an unhandled-exception filter (SetUnhandledExceptionFilter) - the normal
 *      crash-reporter path: when an exception reaches the top of a thread, write
 *      a minidump with MINIDUMP_EXCEPTION_INFORMATION and terminate the process
 *      with the exception code as exit code (as WER does: 0xC0000005 -> 3221225477).
 *   2. a vectored exception handler that acts ONLY while the loader is shutting
 *      down DLLs (RtlDllShutdownInProgress() is TRUE) and ONLY for fatal
 *      hardware exceptions. The loader wraps every DllMain call in its own
 *      exception handler (Wine's MODULE_InitDLL does __TRY/__EXCEPT_ALL), so an
 *      access violation raised by a static destructor run from
 *      DllMain(DLL_PROCESS_DETACH) never reaches the unhandled-exception filter.
 *      Catching the first-chance exception there is what `procdump -e 1` or an
 *      attached debugger would do.
 *
 *   3. a SIGABRT handler (signal()), as crash reporters install one to catch
 *      abort() (std::terminate calls it): the dump records the context of
 *      the handler's caller and the exception code STATUS_FATAL_APP_EXIT
 *      (0x40000015), the status Windows gives a fatal application exit.
 *
 * The dump goes to %DUMPTRIAGE_DUMP% and the sidecar (thread names, unloaded
 * modules, CodeView records read from this live process) to %DUMPTRIAGE_SIDECAR%.
 */
#include <windows.h>
#include <dbghelp.h>
#include <signal.h>
#include <stdio.h>
#include "dtcollect.h"

typedef BOOLEAN(WINAPI *PFN_RtlDllShutdownInProgress)(void);

static volatile LONG g_dumping = 0;
static wchar_t g_dump_path[MAX_PATH];
static wchar_t g_sidecar_path[MAX_PATH];
static PFN_RtlDllShutdownInProgress g_shutdown_in_progress;

static void write_dump(EXCEPTION_POINTERS *ep, const char *how)
{
    if (InterlockedExchange(&g_dumping, 1)) {
        /* A second thread crashing while we dump: park it. */
        Sleep(INFINITE);
    }
    DWORD code = ep->ExceptionRecord->ExceptionCode;
    fprintf(stderr, "crashcap: exception 0x%08lx on thread %lu (%s), writing minidump\n", code,
            GetCurrentThreadId(), how);
    fflush(stderr);
    /* First the facts Wine's writer leaves out, read from this live process. */
    dtcollect_write_sidecar(GetCurrentProcess(), GetCurrentProcessId(), g_sidecar_path, how);

    HANDLE file = CreateFileW(g_dump_path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                              FILE_ATTRIBUTE_NORMAL, NULL);
    if (file != INVALID_HANDLE_VALUE) {
        MINIDUMP_EXCEPTION_INFORMATION mei;
        mei.ThreadId = GetCurrentThreadId();
        mei.ExceptionPointers = ep;
        mei.ClientPointers = FALSE;
        BOOL ok = MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), file,
                                    MiniDumpNormal, &mei, NULL, NULL);
        CloseHandle(file);
        fprintf(stderr, "crashcap: MiniDumpWriteDump %s\n", ok ? "ok" : "FAILED");
    } else {
        fprintf(stderr, "crashcap: cannot create dump file (%lu)\n", GetLastError());
    }
    fflush(stderr);
    TerminateProcess(GetCurrentProcess(), code);
}

static LONG WINAPI on_unhandled(EXCEPTION_POINTERS *ep)
{
    write_dump(ep, "in-process-unhandled-exception-filter");
    return EXCEPTION_EXECUTE_HANDLER;
}

static BOOL is_fatal_hardware(DWORD code)
{
    switch (code) {
    case EXCEPTION_ACCESS_VIOLATION:
    case EXCEPTION_ILLEGAL_INSTRUCTION:
    case EXCEPTION_PRIV_INSTRUCTION:
    case EXCEPTION_INT_DIVIDE_BY_ZERO:
    case EXCEPTION_STACK_OVERFLOW:
    case EXCEPTION_IN_PAGE_ERROR:
        return TRUE;
    default:
        return FALSE;
    }
}

static LONG WINAPI on_vectored(EXCEPTION_POINTERS *ep)
{
    if (!g_shutdown_in_progress || !g_shutdown_in_progress()) return EXCEPTION_CONTINUE_SEARCH;
    if (!is_fatal_hardware(ep->ExceptionRecord->ExceptionCode)) return EXCEPTION_CONTINUE_SEARCH;
    write_dump(ep, "in-process-vectored-handler-during-dll-shutdown");
    return EXCEPTION_CONTINUE_SEARCH;
}

static void on_abort_signal(int sig)
{
    (void)sig;
    CONTEXT context;
    EXCEPTION_RECORD record;
    ZeroMemory(&record, sizeof record);
    RtlCaptureContext(&context);
    record.ExceptionCode = 0x40000015; /* STATUS_FATAL_APP_EXIT */
    record.ExceptionFlags = EXCEPTION_NONCONTINUABLE;
    record.ExceptionAddress = (void *)context.Rip;
    EXCEPTION_POINTERS ep = {&record, &context};
    write_dump(&ep, "in-process-abort-signal-handler");
}

__declspec(dllexport) int crashcap_install(void)
{
    DWORD n = GetEnvironmentVariableW(L"DUMPTRIAGE_DUMP", g_dump_path, MAX_PATH);
    if (!n || n >= MAX_PATH) lstrcpyW(g_dump_path, L"crash.dmp");
    n = GetEnvironmentVariableW(L"DUMPTRIAGE_SIDECAR", g_sidecar_path, MAX_PATH);
    if (!n || n >= MAX_PATH) {
        lstrcpyW(g_sidecar_path, g_dump_path);
        lstrcatW(g_sidecar_path, L".sidecar.txt");
    }
    g_shutdown_in_progress = (PFN_RtlDllShutdownInProgress)GetProcAddress(
        GetModuleHandleW(L"ntdll.dll"), "RtlDllShutdownInProgress");
    SetUnhandledExceptionFilter(on_unhandled);
    AddVectoredExceptionHandler(1, on_vectored);
    signal(SIGABRT, on_abort_signal);
    return 0;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst;
    (void)reason;
    (void)reserved;
    return TRUE;
}
