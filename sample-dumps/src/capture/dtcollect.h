/*
 * dtcollect: reads, from a live process, the facts that Wine's MiniDumpWriteDump
 * leaves out of a minidump, and writes them to a plain-text "sidecar" file that
 * tools/complete_dump.py later merges into the dump.
 *
 *   - thread names      : GetThreadDescription() on every thread of the process
 *   - unloaded modules  : ntdll's unload event trace (RtlGetUnloadEventTraceEx),
 *                         read with ReadProcessMemory, as dbghelp does on Windows
 *   - CodeView records  : each loaded image's own RSDS debug record, read from the
 *                         image mapped in the process (debug directory entry type 2)
 *
 * Works the same on the current process (crash reporter, in-process) and on
 * another process (capture.exe, out of process).
 */
#ifndef DTCOLLECT_H
#define DTCOLLECT_H
#include <windows.h>

/* Writes the sidecar for process `proc` (id `pid`) to `path`.
 * `how` is a free-text word recorded in the file (e.g. "in-process-uef").
 * Returns 0 on success. */
int dtcollect_write_sidecar(HANDLE proc, DWORD pid, const wchar_t *path, const char *how);

#endif
