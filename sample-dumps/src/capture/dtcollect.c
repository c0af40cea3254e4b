/* See dtcollect.h. Plain Win32 C; no CRT allocation inside the crash path
 * beyond small stack buffers and HeapAlloc. */
#include "dtcollect.h"
#include <tlhelp32.h>
#include <psapi.h>
#include <stdio.h>
#include <string.h>

typedef HRESULT(WINAPI *PFN_GetThreadDescription)(HANDLE, PWSTR *);
typedef void(WINAPI *PFN_RtlGetUnloadEventTraceEx)(PULONG *, PULONG *, PVOID *);

/* Layout shared by Windows and Wine for the leading fields of
 * RTL_UNLOAD_EVENT_TRACE (64-bit). Wine's element is 96 bytes (no Version
 * field), Windows' is 104; the element size is read from ntdll, never assumed. */
typedef struct {
    ULONGLONG BaseAddress;
    ULONGLONG SizeOfImage;
    ULONG Sequence;
    ULONG TimeDateStamp;
    ULONG CheckSum;
    WCHAR ImageName[32];
} UNLOAD_TRACE_HEAD;

static void put_hex(FILE *f, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
}

/* UTF-16 -> hex of the UTF-16LE bytes (keeps the file ASCII and lossless). */
static void put_wstr_hex(FILE *f, const WCHAR *s, size_t max_chars)
{
    size_t n = 0;
    while (n < max_chars && s[n]) n++;
    put_hex(f, (const unsigned char *)s, n * sizeof(WCHAR));
}

static BOOL rpm(HANDLE proc, ULONGLONG addr, void *buf, SIZE_T len)
{
    SIZE_T got = 0;
    return ReadProcessMemory(proc, (LPCVOID)(ULONG_PTR)addr, buf, len, &got) && got == len;
}

static void collect_thread_names(FILE *f, DWORD pid)
{
    PFN_GetThreadDescription get_desc = (PFN_GetThreadDescription)GetProcAddress(
        GetModuleHandleW(L"kernelbase.dll"), "GetThreadDescription");
    if (!get_desc)
        get_desc = (PFN_GetThreadDescription)GetProcAddress(GetModuleHandleW(L"kernel32.dll"),
                                                            "GetThreadDescription");
    if (!get_desc) {
        fprintf(f, "note GetThreadDescription-unavailable\n");
        return;
    }
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE) {
        fprintf(f, "note thread-snapshot-failed %lu\n", GetLastError());
        return;
    }
    THREADENTRY32 te;
    te.dwSize = sizeof(te);
    int n = 0;
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te)) {
        if (te.th32OwnerProcessID != pid) continue;
        n++;
        HANDLE th = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, te.th32ThreadID);
        if (!th) {
            fprintf(f, "note open-thread-failed %lu %lu\n", te.th32ThreadID, GetLastError());
            continue;
        }
        PWSTR desc = NULL;
        HRESULT hr = get_desc(th, &desc);
        /* Wine returns HRESULT_FROM_NT(STATUS_SUCCESS) == 0x10000000 on success. */
        if ((hr == S_OK || hr == 0x10000000) && desc && desc[0]) {
            fprintf(f, "thread_name %lu ", te.th32ThreadID);
            put_wstr_hex(f, desc, 1024);
            fprintf(f, "\n");
        } else {
            fprintf(f, "thread_unnamed %lu\n", te.th32ThreadID);
        }
        if (desc) LocalFree(desc);
        CloseHandle(th);
    }
    CloseHandle(snap);
    fprintf(f, "note threads-seen %d\n", n);
}

/* Base address of ntdll in `proc`, via the module list (psapi). */
static ULONGLONG remote_module_base(HANDLE proc, const wchar_t *name)
{
    HMODULE mods[512];
    DWORD needed = 0;
    if (!EnumProcessModules(proc, mods, sizeof(mods), &needed)) return 0;
    DWORD count = needed / sizeof(HMODULE);
    if (count > 512) count = 512;
    for (DWORD i = 0; i < count; i++) {
        wchar_t base[MAX_PATH];
        if (GetModuleBaseNameW(proc, mods[i], base, MAX_PATH) && !lstrcmpiW(base, name))
            return (ULONGLONG)(ULONG_PTR)mods[i];
    }
    return 0;
}

static void collect_unloaded(FILE *f, HANDLE proc)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    PFN_RtlGetUnloadEventTraceEx get_trace =
        (PFN_RtlGetUnloadEventTraceEx)GetProcAddress(ntdll, "RtlGetUnloadEventTraceEx");
    if (!get_trace) {
        fprintf(f, "note RtlGetUnloadEventTraceEx-unavailable\n");
        return;
    }
    PULONG p_size = NULL, p_count = NULL;
    PVOID p_trace = NULL;
    get_trace(&p_size, &p_count, &p_trace);
    /* The three pointers are addresses inside ntdll's data. ntdll is mapped at the
     * same base in every process (Windows and Wine alike); check it, and rebase
     * if it ever differs. */
    ULONGLONG local_base = (ULONGLONG)(ULONG_PTR)ntdll;
    ULONGLONG remote_base = remote_module_base(proc, L"ntdll.dll");
    if (!remote_base) {
        fprintf(f, "note remote-ntdll-not-found\n");
        return;
    }
    LONGLONG delta = (LONGLONG)(remote_base - local_base);
    fprintf(f, "note ntdll local=%llx remote=%llx\n", local_base, remote_base);
    ULONG elem_size = 0, elem_count = 0;
    ULONGLONG trace_ptr = 0;
    if (!rpm(proc, (ULONG_PTR)p_size + delta, &elem_size, 4) ||
        !rpm(proc, (ULONG_PTR)p_count + delta, &elem_count, 4) ||
        !rpm(proc, (ULONG_PTR)p_trace + delta, &trace_ptr, 8)) {
        fprintf(f, "note unload-trace-read-failed %lu\n", GetLastError());
        return;
    }
    fprintf(f, "note unload-trace elem_size=%lu elem_count=%lu at=%llx\n", elem_size, elem_count,
            trace_ptr);
    if (!trace_ptr || elem_size < sizeof(UNLOAD_TRACE_HEAD) || elem_count > 1024) return;
    for (ULONG i = 0; i < elem_count; i++) {
        UNLOAD_TRACE_HEAD e;
        if (!rpm(proc, trace_ptr + (ULONGLONG)i * elem_size, &e, sizeof(e))) break;
        if (!e.BaseAddress) continue;
        /* unloaded <seq> <base> <size> <checksum> <timestamp> <name-utf16-hex> */
        fprintf(f, "unloaded %lu %llx %llx %lx %lx ", e.Sequence, e.BaseAddress, e.SizeOfImage,
                e.CheckSum, e.TimeDateStamp);
        put_wstr_hex(f, e.ImageName, 32);
        fprintf(f, "\n");
    }
}

/* For every loaded image: read its PE headers and debug directory in the
 * process's memory and record the CodeView (RSDS) record bytes verbatim. */
static void collect_codeview(FILE *f, HANDLE proc)
{
    HMODULE mods[512];
    DWORD needed = 0;
    if (!EnumProcessModules(proc, mods, sizeof(mods), &needed)) {
        fprintf(f, "note enum-modules-failed %lu\n", GetLastError());
        return;
    }
    DWORD count = needed / sizeof(HMODULE);
    if (count > 512) count = 512;
    for (DWORD i = 0; i < count; i++) {
        ULONGLONG base = (ULONGLONG)(ULONG_PTR)mods[i];
        wchar_t name[MAX_PATH] = {0};
        GetModuleBaseNameW(proc, mods[i], name, MAX_PATH);
        IMAGE_DOS_HEADER dos;
        IMAGE_NT_HEADERS64 nt;
        if (!rpm(proc, base, &dos, sizeof(dos)) || dos.e_magic != IMAGE_DOS_SIGNATURE) continue;
        if (!rpm(proc, base + dos.e_lfanew, &nt, sizeof(nt)) || nt.Signature != IMAGE_NT_SIGNATURE)
            continue;
        if (nt.OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC) continue;
        fprintf(f, "module %llx %lx %lx %lx ", base, nt.OptionalHeader.SizeOfImage,
                nt.OptionalHeader.CheckSum, nt.FileHeader.TimeDateStamp);
        put_wstr_hex(f, name, MAX_PATH);
        fprintf(f, "\n");
        IMAGE_DATA_DIRECTORY dd = nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_DEBUG];
        if (!dd.VirtualAddress || !dd.Size) {
            fprintf(f, "cv_none %llx no-debug-directory\n", base);
            continue;
        }
        DWORD n = dd.Size / sizeof(IMAGE_DEBUG_DIRECTORY);
        int found = 0;
        for (DWORD k = 0; k < n && k < 32; k++) {
            IMAGE_DEBUG_DIRECTORY dbg;
            if (!rpm(proc, base + dd.VirtualAddress + k * sizeof(dbg), &dbg, sizeof(dbg))) break;
            if (dbg.Type != IMAGE_DEBUG_TYPE_CODEVIEW || !dbg.AddressOfRawData ||
                dbg.SizeOfData < 24 || dbg.SizeOfData > 4096)
                continue;
            unsigned char buf[4096];
            if (!rpm(proc, base + dbg.AddressOfRawData, buf, dbg.SizeOfData)) continue;
            if (memcmp(buf, "RSDS", 4) != 0) continue;
            fprintf(f, "cv %llx ", base);
            put_hex(f, buf, dbg.SizeOfData);
            fprintf(f, "\n");
            found = 1;
            break;
        }
        if (!found) fprintf(f, "cv_none %llx no-rsds-record\n", base);
    }
}

int dtcollect_write_sidecar(HANDLE proc, DWORD pid, const wchar_t *path, const char *how)
{
    FILE *f = _wfopen(path, L"w");
    if (!f) return 1;
    SYSTEMTIME st;
    GetSystemTime(&st);
    fprintf(f, "# dumptriage capture sidecar: facts read from the live process at capture time\n");
    fprintf(f, "capture %s pid=%lu utc=%04u-%02u-%02uT%02u:%02u:%02uZ\n", how, pid, st.wYear,
            st.wMonth, st.wDay, st.wHour, st.wMinute, st.wSecond);
    collect_thread_names(f, pid);
    collect_unloaded(f, proc);
    collect_codeview(f, proc);
    fprintf(f, "end\n");
    fclose(f);
    return 0;
}
