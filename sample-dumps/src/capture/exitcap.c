/*
 * exitcap.exe - a minimal debugger that dumps a process at a chosen moment of its
 * exit, for the real onnxruntime + Node samples (sample-dumps/vendor/).
 *
 *   exitcap.exe <dump> <sidecar> <onnxruntime.dll> <moment> <program> [args...]
 *
 *   <moment>   ReleaseEnv              on entry to the C API's ReleaseEnv
 *              detach:<module>         on entry to <module>'s DLL entry point with
 *                                      DLL_PROCESS_DETACH (the loader's shutdown)
 *              either, then +free:K    at the K-th ntdll!RtlFreeHeap call made by that
 *                                      thread after that moment (deeper in the teardown)
 *
 * onnxruntime.dll exports only `OrtGetApiBase` for its C API: the entry points are
 * reached through the `OrtApi` table it returns. Their addresses are found the way
 * a user would: this tool loads the same onnxruntime.dll, calls
 * `OrtGetApiBase()->GetApi(1)` and takes the table's entries (indices fixed by the
 * ABI: CreateEnv 3, CreateSession 7, ReleaseEnv 92, ReleaseSession 95) as offsets
 * from the DLL's base, then puts int3 breakpoints at the same offsets in the
 * debuggee when its onnxruntime.dll is loaded. A module's entry point comes from
 * its PE header, read in the debuggee; the breakpoint there acts only when the
 * reason argument (rdx) is DLL_PROCESS_DETACH. Every hit of the C API entries is
 * logged to stderr, so the log says how many sessions were created and released.
 *
 * At the chosen moment the thread's instruction pointer is put back on the
 * breakpoint's address and the original byte restored, the sidecar is collected
 * (dtcollect.c), and MiniDumpWriteDump(MiniDumpNormal) is called without exception
 * information: the dump shows the process as it was, not a breakpoint exception.
 * Then every breakpoint is removed and the process runs to its end; its exit code
 * is printed.
 *
 * Exit code: 0 when a dump was written, 2 when the moment never came, 1 on error.
 */
#include <windows.h>
#include <dbghelp.h>
#include <psapi.h>
#include <stdio.h>
#include <wchar.h>
#include "dtcollect.h"

typedef struct {
    const void *(*GetApi)(unsigned version);
    const char *(*GetVersionString)(void);
} OrtApiBaseLocal;

enum { BP_CREATE_ENV, BP_CREATE_SESSION, BP_RELEASE_ENV, BP_RELEASE_SESSION, BP_FREE, BP_DETACH, BP_COUNT };
static const char *bp_names[BP_COUNT] = {"CreateEnv", "CreateSession", "ReleaseEnv", "ReleaseSession",
                                         "ntdll!RtlFreeHeap", "DLL entry point (DLL_PROCESS_DETACH)"};
static const int api_index[4] = {3, 7, 92, 95};

typedef struct {
    ULONGLONG addr;
    BYTE orig;
    int armed;
    int hits;
} Breakpoint;

static Breakpoint bps[BP_COUNT];
static HANDLE proc;

static int write_byte(ULONGLONG addr, BYTE b)
{
    SIZE_T n = 0;
    if (!WriteProcessMemory(proc, (void *)(ULONG_PTR)addr, &b, 1, &n) || n != 1) return -1;
    FlushInstructionCache(proc, (void *)(ULONG_PTR)addr, 1);
    return 0;
}

static int arm(int i)
{
    SIZE_T n = 0;
    if (bps[i].armed || !bps[i].addr) return 0;
    if (!ReadProcessMemory(proc, (void *)(ULONG_PTR)bps[i].addr, &bps[i].orig, 1, &n) || n != 1) return -1;
    if (write_byte(bps[i].addr, 0xCC)) return -1;
    bps[i].armed = 1;
    return 0;
}

static void disarm(int i)
{
    if (!bps[i].armed) return;
    write_byte(bps[i].addr, bps[i].orig);
    bps[i].armed = 0;
}

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

/* The file name (no directory) of the module mapped at `base` in the debuggee. */
static void module_name(LPVOID base, wchar_t *out, DWORD cap)
{
    wchar_t path[MAX_PATH];
    out[0] = 0;
    if (!GetMappedFileNameW(proc, base, path, MAX_PATH)) return;
    const wchar_t *slash = wcsrchr(path, L'\\');
    lstrcpynW(out, slash ? slash + 1 : path, (int)cap);
}

int wmain(int argc, wchar_t **argv)
{
    if (argc < 6) {
        fwprintf(stderr, L"usage: exitcap.exe <dump> <sidecar> <onnxruntime.dll> "
                         L"<ReleaseEnv|detach:MODULE>[+free:K] <program> [args...]\n");
        return 1;
    }
    const wchar_t *dump_path = argv[1], *sidecar_path = argv[2], *ort_path = argv[3], *moment = argv[4];
    /* <moment> = (ReleaseEnv | detach:<module>) [+free:K] */
    static wchar_t first[MAX_PATH], detach_module[MAX_PATH];
    int free_k = 0, start_bp;
    lstrcpynW(first, moment, MAX_PATH);
    wchar_t *plus = wcschr(first, L'+');
    if (plus) {
        if (wcsncmp(plus, L"+free:", 6) || (free_k = _wtoi(plus + 6)) < 1) {
            fwprintf(stderr, L"exitcap: bad moment %ls\n", moment);
            return 1;
        }
        *plus = 0;
    }
    if (!wcscmp(first, L"ReleaseEnv")) {
        start_bp = BP_RELEASE_ENV;
    } else if (!wcsncmp(first, L"detach:", 7) && first[7]) {
        start_bp = BP_DETACH;
        lstrcpynW(detach_module, first + 7, MAX_PATH);
    } else {
        fwprintf(stderr, L"exitcap: bad moment %ls\n", moment);
        return 1;
    }

    /* Offsets of the OrtApi entries, from our own copy of the same DLL. */
    HMODULE ort = LoadLibraryExW(ort_path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!ort) {
        fwprintf(stderr, L"exitcap: cannot load %ls (%lu)\n", ort_path, GetLastError());
        return 1;
    }
    const OrtApiBaseLocal *(*get_base)(void) =
        (const OrtApiBaseLocal *(*)(void))(void *)GetProcAddress(ort, "OrtGetApiBase");
    if (!get_base) {
        fwprintf(stderr, L"exitcap: %ls has no OrtGetApiBase export\n", ort_path);
        return 1;
    }
    const OrtApiBaseLocal *api_base = get_base();
    void *const *api = (void *const *)api_base->GetApi(1);
    if (!api) {
        fwprintf(stderr, L"exitcap: GetApi(1) returned NULL\n");
        return 1;
    }
    ULONGLONG rva[4];
    for (int i = 0; i < 4; i++) {
        rva[i] = (ULONGLONG)(ULONG_PTR)api[api_index[i]] - (ULONGLONG)(ULONG_PTR)ort;
        fwprintf(stderr, L"exitcap: onnxruntime %hs: OrtApi[%d] %hs at +0x%llx\n", api_base->GetVersionString(),
                 api_index[i], bp_names[i], rva[i]);
    }
    /* ntdll is mapped at the same base in every process (checked by dtcollect too). */
    ULONGLONG free_addr = (ULONGLONG)(ULONG_PTR)GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "RtlFreeHeap");

    static wchar_t cmd[8192];
    join_args(argc, argv, 5, cmd, 8192);
    STARTUPINFOW si;
    PROCESS_INFORMATION pi;
    ZeroMemory(&si, sizeof(si));
    si.cb = sizeof(si);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, DEBUG_ONLY_THIS_PROCESS, NULL, NULL, &si, &pi)) {
        fwprintf(stderr, L"exitcap: cannot start %ls (%lu)\n", cmd, GetLastError());
        return 1;
    }
    proc = pi.hProcess;
    DWORD pid = pi.dwProcessId;
    CloseHandle(pi.hThread);

    int dumped = 0, result = 2, initial_break_seen = 0, free_hits = 0;
    DWORD moment_thread = 0, rearm_thread = 0;
    int rearm_bp = -1;
    DEBUG_EVENT ev;
    for (;;) {
        if (!WaitForDebugEvent(&ev, INFINITE)) {
            fwprintf(stderr, L"exitcap: WaitForDebugEvent failed (%lu)\n", GetLastError());
            return 1;
        }
        DWORD status = DBG_CONTINUE;
        switch (ev.dwDebugEventCode) {
        case LOAD_DLL_DEBUG_EVENT: {
            wchar_t name[MAX_PATH];
            module_name(ev.u.LoadDll.lpBaseOfDll, name, MAX_PATH);
            if (!lstrcmpiW(name, L"onnxruntime.dll") && !dumped) {
                ULONGLONG base = (ULONGLONG)(ULONG_PTR)ev.u.LoadDll.lpBaseOfDll;
                fwprintf(stderr, L"exitcap: onnxruntime.dll loaded at 0x%llx\n", base);
                for (int i = 0; i < 4; i++) {
                    bps[i].addr = base + rva[i];
                    if (arm(i)) fwprintf(stderr, L"exitcap: cannot set a breakpoint at 0x%llx\n", bps[i].addr);
                }
            }
            if (start_bp == BP_DETACH && !lstrcmpiW(name, detach_module) && !dumped) {
                ULONGLONG base = (ULONGLONG)(ULONG_PTR)ev.u.LoadDll.lpBaseOfDll;
                IMAGE_DOS_HEADER dos;
                IMAGE_NT_HEADERS64 nt;
                SIZE_T n = 0;
                if (ReadProcessMemory(proc, (void *)(ULONG_PTR)base, &dos, sizeof(dos), &n) &&
                    ReadProcessMemory(proc, (void *)(ULONG_PTR)(base + dos.e_lfanew), &nt, sizeof(nt), &n) &&
                    nt.OptionalHeader.AddressOfEntryPoint) {
                    bps[BP_DETACH].addr = base + nt.OptionalHeader.AddressOfEntryPoint;
                    fwprintf(stderr, L"exitcap: %ls loaded at 0x%llx, entry point +0x%lx\n", name, base,
                             nt.OptionalHeader.AddressOfEntryPoint);
                    if (arm(BP_DETACH)) fwprintf(stderr, L"exitcap: cannot set a breakpoint at its entry point\n");
                } else {
                    fwprintf(stderr, L"exitcap: cannot read the entry point of %ls\n", name);
                }
            }
            if (ev.u.LoadDll.hFile) CloseHandle(ev.u.LoadDll.hFile);
            break;
        }
        case CREATE_PROCESS_DEBUG_EVENT:
            if (ev.u.CreateProcessInfo.hFile) CloseHandle(ev.u.CreateProcessInfo.hFile);
            break;
        case EXCEPTION_DEBUG_EVENT: {
            EXCEPTION_RECORD *er = &ev.u.Exception.ExceptionRecord;
            ULONGLONG at = (ULONGLONG)(ULONG_PTR)er->ExceptionAddress;
            int which = -1;
            for (int i = 0; i < BP_COUNT; i++)
                if (bps[i].armed && bps[i].addr == at) which = i;
            if (er->ExceptionCode == EXCEPTION_BREAKPOINT && which >= 0) {
                HANDLE th = OpenThread(THREAD_ALL_ACCESS, FALSE, ev.dwThreadId);
                CONTEXT ctx;
                ZeroMemory(&ctx, sizeof(ctx));
                ctx.ContextFlags = CONTEXT_FULL;
                GetThreadContext(th, &ctx);
                ctx.Rip = at; /* back on the instruction the int3 replaced */
                disarm(which);
                bps[which].hits++;
                /* The entry point counts only when called for DLL_PROCESS_DETACH (rdx == 0). */
                int counts = which != BP_DETACH || ctx.Rdx == DLL_PROCESS_DETACH;
                if (which != BP_FREE && counts)
                    fwprintf(stderr, L"exitcap: thread %lu entered %hs (hit %d)\n", ev.dwThreadId,
                             bp_names[which], bps[which].hits);
                int moment_now = 0;
                if (which == start_bp && counts && !moment_thread) {
                    moment_thread = ev.dwThreadId;
                    if (free_k) {
                        bps[BP_FREE].addr = free_addr;
                    } else {
                        moment_now = 1;
                    }
                }
                if (which == BP_FREE && ev.dwThreadId == moment_thread && ++free_hits >= free_k) moment_now = 1;
                if (moment_now && !dumped) {
                    SetThreadContext(th, &ctx);
                    for (int i = 0; i < BP_COUNT; i++) disarm(i);
                    fwprintf(stderr, L"exitcap: dumping pid %lu at thread %lu, rip 0x%llx\n", pid, ev.dwThreadId,
                             (unsigned long long)ctx.Rip);
                    if (dtcollect_write_sidecar(proc, pid, sidecar_path, "debugger-breakpoint-at-exit"))
                        fwprintf(stderr, L"exitcap: cannot write sidecar %ls\n", sidecar_path);
                    HANDLE file = CreateFileW(dump_path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                                              FILE_ATTRIBUTE_NORMAL, NULL);
                    if (file == INVALID_HANDLE_VALUE) {
                        fwprintf(stderr, L"exitcap: cannot create %ls (%lu)\n", dump_path, GetLastError());
                        result = 1;
                    } else {
                        BOOL ok = MiniDumpWriteDump(proc, pid, file, MiniDumpNormal, NULL, NULL, NULL);
                        DWORD err = GetLastError();
                        CloseHandle(file);
                        if (ok) {
                            fwprintf(stderr, L"exitcap: wrote %ls\n", dump_path);
                            result = 0;
                        } else {
                            fwprintf(stderr, L"exitcap: MiniDumpWriteDump failed (%lu)\n", err);
                            result = 1;
                        }
                    }
                    dumped = 1;
                } else {
                    /* Step over the original instruction, then put the int3 back. */
                    ctx.EFlags |= 0x100;
                    SetThreadContext(th, &ctx);
                    rearm_bp = which;
                    rearm_thread = ev.dwThreadId;
                }
                CloseHandle(th);
            } else if (er->ExceptionCode == EXCEPTION_SINGLE_STEP && rearm_bp >= 0 &&
                       ev.dwThreadId == rearm_thread) {
                if (!dumped) arm(rearm_bp);
                if (!dumped && moment_thread && bps[BP_FREE].addr) arm(BP_FREE);
                rearm_bp = -1;
            } else if (er->ExceptionCode == EXCEPTION_BREAKPOINT && !initial_break_seen) {
                initial_break_seen = 1; /* the loader's breakpoint at process start */
            } else {
                status = DBG_EXCEPTION_NOT_HANDLED; /* not ours: the process handles it */
            }
            /* The first moment came on this thread: from now on, watch its heap frees. */
            if (!dumped && moment_thread && bps[BP_FREE].addr && !bps[BP_FREE].armed && rearm_bp < 0) arm(BP_FREE);
            break;
        }
        case EXIT_PROCESS_DEBUG_EVENT:
            fwprintf(stderr, L"exitcap: pid %lu exited with 0x%08lx; hits:", pid, ev.u.ExitProcess.dwExitCode);
            for (int i = 0; i < 4; i++) fwprintf(stderr, L" %hs=%d", bp_names[i], bps[i].hits);
            fwprintf(stderr, L"\n");
            ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, DBG_CONTINUE);
            if (!dumped) fwprintf(stderr, L"exitcap: the moment %ls never came: no dump\n", moment);
            return result;
        default:
            break;
        }
        ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, status);
    }
}
