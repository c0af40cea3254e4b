/* See dtmemory.h. */
#include "dtmemory.h"
#include <winternl.h>
#include <tlhelp32.h>
#include <psapi.h>
#include <stdio.h>
#include <string.h>

typedef NTSTATUS(NTAPI *PFN_NtQueryInformationThread)(HANDLE, ULONG, PVOID, ULONG, PULONG);

/* THREAD_BASIC_INFORMATION (not in mingw's winternl.h). */
typedef struct {
    NTSTATUS ExitStatus;
    PVOID TebBaseAddress;
    CLIENT_ID ClientId;
    ULONG_PTR AffinityMask;
    LONG Priority;
    LONG BasePriority;
} DT_THREAD_BASIC_INFORMATION;

/* Bytes kept of the PEB and of each TEB: the PEB up to and past LoaderLock
 * (0x110), the TEB's NT_TIB, client id and PEB pointer (0x60). */
#define PEB_BYTES 0x400
#define TEB_BYTES 0x100
#define MAX_SECTION_BYTES 0x40000
#define MAX_RECORDS 4096

static BOOL rpm(HANDLE proc, ULONGLONG addr, void *buf, SIZE_T len)
{
    SIZE_T got = 0;
    return ReadProcessMemory(proc, (LPCVOID)(ULONG_PTR)addr, buf, len, &got) && got == len;
}

/* memory <base> <bytes>: one range, hex. */
static void put_memory(FILE *f, ULONGLONG base, const unsigned char *p, SIZE_T n)
{
    fprintf(f, "memory %llx ", base);
    for (SIZE_T i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
    fprintf(f, "\n");
}

static void keep(FILE *f, HANDLE proc, ULONGLONG base, SIZE_T n)
{
    static unsigned char buf[MAX_SECTION_BYTES];
    if (n > sizeof(buf) || !rpm(proc, base, buf, n)) {
        fprintf(f, "note memory-unreadable %llx %llx\n", base, (ULONGLONG)n);
        return;
    }
    put_memory(f, base, buf, n);
}

static void keep_peb_and_tebs(FILE *f, HANDLE proc, DWORD pid)
{
    PROCESS_BASIC_INFORMATION pbi;
    ULONG len = 0;
    if (NtQueryInformationProcess(proc, ProcessBasicInformation, &pbi, sizeof(pbi), &len) == 0)
        keep(f, proc, (ULONGLONG)(ULONG_PTR)pbi.PebBaseAddress, PEB_BYTES);
    PFN_NtQueryInformationThread query = (PFN_NtQueryInformationThread)GetProcAddress(
        GetModuleHandleW(L"ntdll.dll"), "NtQueryInformationThread");
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (!query || snap == INVALID_HANDLE_VALUE) return;
    THREADENTRY32 te;
    te.dwSize = sizeof(te);
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te)) {
        if (te.th32OwnerProcessID != pid) continue;
        HANDLE t = OpenThread(THREAD_QUERY_INFORMATION, FALSE, te.th32ThreadID);
        if (!t) continue;
        DT_THREAD_BASIC_INFORMATION tbi;
        if (query(t, 0 /* ThreadBasicInformation */, &tbi, sizeof(tbi), &len) == 0)
            keep(f, proc, (ULONGLONG)(ULONG_PTR)tbi.TebBaseAddress, TEB_BYTES);
        CloseHandle(t);
    }
    CloseHandle(snap);
}

/* Each loaded image's writable sections (what MiniDumpWithDataSegs keeps),
 * and the debug record of every critical section found in them (a
 * RTL_CRITICAL_SECTION_DEBUG pointing back at the section: the heap memory
 * MiniDumpWithPrivateReadWriteMemory would keep, narrowed to it). */
static void keep_data_sections(FILE *f, HANDLE proc)
{
    HMODULE mods[512];
    DWORD needed = 0;
    if (!EnumProcessModules(proc, mods, sizeof(mods), &needed)) return;
    DWORD count = needed / sizeof(HMODULE);
    if (count > 512) count = 512;
    static unsigned char data[MAX_SECTION_BYTES];
    int records = 0;
    for (DWORD i = 0; i < count; i++) {
        ULONGLONG base = (ULONGLONG)(ULONG_PTR)mods[i];
        IMAGE_DOS_HEADER dos;
        IMAGE_NT_HEADERS64 nt;
        if (!rpm(proc, base, &dos, sizeof(dos)) || dos.e_magic != IMAGE_DOS_SIGNATURE) continue;
        if (!rpm(proc, base + dos.e_lfanew, &nt, sizeof(nt)) || nt.Signature != IMAGE_NT_SIGNATURE)
            continue;
        ULONGLONG sections = base + dos.e_lfanew + FIELD_OFFSET(IMAGE_NT_HEADERS64, OptionalHeader) +
                             nt.FileHeader.SizeOfOptionalHeader;
        for (WORD s = 0; s < nt.FileHeader.NumberOfSections && s < 96; s++) {
            IMAGE_SECTION_HEADER sh;
            if (!rpm(proc, sections + s * sizeof(sh), &sh, sizeof(sh))) break;
            DWORD want = IMAGE_SCN_MEM_WRITE | IMAGE_SCN_MEM_READ;
            if ((sh.Characteristics & want) != want || (sh.Characteristics & IMAGE_SCN_MEM_SHARED))
                continue;
            SIZE_T n = sh.Misc.VirtualSize & ~(SIZE_T)7;
            ULONGLONG at = base + sh.VirtualAddress;
            if (!n || n > sizeof(data) || !rpm(proc, at, data, n)) {
                fprintf(f, "note data-section-skipped %llx %llx\n", at, (ULONGLONG)n);
                continue;
            }
            put_memory(f, at, data, n);
            /* DebugInfo at +0, OwningThread at +0x10: a record whose
             * CriticalSection field (+8) is this word's address. */
            for (SIZE_T o = 0; o + 0x28 <= n && records < MAX_RECORDS; o += 8) {
                ULONGLONG debug = *(ULONGLONG *)(data + o);
                if (!debug || debug == ~0ULL || (debug & 7)) continue;
                unsigned char record[0x30];
                if (!rpm(proc, debug, record, sizeof(record))) continue;
                if (*(ULONGLONG *)(record + 8) != at + o || *(WORD *)record != 0) continue;
                put_memory(f, debug, record, sizeof(record));
                records++;
            }
        }
    }
    fprintf(f, "note critical-section-debug-records %d\n", records);
}

void dtmemory_write(HANDLE proc, DWORD pid, const wchar_t *path)
{
    FILE *f = _wfopen(path, L"a");
    if (!f) return;
    keep_peb_and_tebs(f, proc, pid);
    keep_data_sections(f, proc);
    fclose(f);
}
