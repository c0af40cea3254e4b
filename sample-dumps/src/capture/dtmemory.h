/*
 * dtmemory: the memory a wait analysis reads, kept for out-of-process
 * captures (capture.exe): what Windows' MiniDumpWithDataSegs and
 * MiniDumpWithProcessThreadData keep and Wine 8's writer ignores (it keeps
 * only stacks unless asked for full memory):
 *
 *   - the PEB (its first 0x400 bytes: LoaderLock at 0x110) and the head of
 *     each TEB (0x100 bytes: the PEB pointer at 0x60);
 *   - the writable sections of every loaded image (a program's and ntdll's
 *     data, where global critical sections and the loader lock live);
 *   - the debug record of each critical section in those sections.
 *
 * Appends "memory <base> <hex bytes>" lines to the sidecar, which
 * tools/complete_dump.py adds to the dump's memory list.
 */
#ifndef DTMEMORY_H
#define DTMEMORY_H
#include <windows.h>

void dtmemory_write(HANDLE proc, DWORD pid, const wchar_t *path);

#endif
