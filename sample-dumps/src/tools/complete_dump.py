#!/usr/bin/env python3
"""Complete a Wine-written minidump with what Windows' writer would have put in it.

Wine's MiniDumpWriteDump (dbghelp, Wine 8) writes no UnloadedModuleListStream
(type 14), no ThreadNamesStream (type 24), and empty CodeView records for every
module. The capture code (src/capture/dtcollect.c) reads those facts from the
live process at capture time into a sidecar text file; this script appends them
to a copy of the raw dump:

  * each module whose CvRecord is empty gets the RSDS record read from its own
    mapped image (module matched by base address); modules whose image has no
    RSDS record (Wine's own DLLs) stay without one;
  * a MINIDUMP_UNLOADED_MODULE_LIST from ntdll's unload event trace;
  * a MINIDUMP_THREAD_NAME_LIST from GetThreadDescription, for threads that are
    in the dump's thread list and have a name;
  * the memory ranges capture.exe keeps for the wait analysis (dtmemory.c: the
    PEB, TEB heads, the images' writable sections and the debug records of the
    critical sections in them; what Windows' MiniDumpWithDataSegs and
    MiniDumpWithProcessThreadData keep), added to a new memory list that
    starts with Wine's descriptors unchanged (ranges Wine already wrote are
    not repeated).

The raw dump is never modified. New data is appended at the end of the file and
a new, larger stream directory is written after it (the header then points to
it); everything Wine wrote stays byte-for-byte where it was.

usage: complete_dump.py RAW_DUMP SIDECAR OUT_DUMP
"""
import struct
import sys

MD_SIGNATURE = 0x504D444D  # 'MDMP'
THREAD_LIST = 3
MODULE_LIST = 4
MEMORY_LIST = 5
UNLOADED_MODULE_LIST = 14
THREAD_NAMES = 24
MINIDUMP_WITH_UNLOADED_MODULES = 0x20


def parse_sidecar(path):
    names, unloaded, cv, modules, notes, memory = {}, [], {}, {}, [], []
    with open(path, "r", encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            kind = parts[0]
            if kind == "thread_name":
                names[int(parts[1])] = bytes.fromhex(parts[2]).decode("utf-16-le")
            elif kind == "unloaded":
                seq, base, size, checksum, stamp = (int(p, 16) if i else int(p) for i, p in enumerate(parts[1:6]))
                name = bytes.fromhex(parts[6]).decode("utf-16-le") if len(parts) > 6 else ""
                unloaded.append((seq, base, size, checksum, stamp, name))
            elif kind == "cv":
                cv[int(parts[1], 16)] = bytes.fromhex(parts[2])
            elif kind == "memory":
                memory.append((int(parts[1], 16), bytes.fromhex(parts[2])))
            elif kind == "module":
                modules[int(parts[1], 16)] = bytes.fromhex(parts[5]).decode("utf-16-le") if len(parts) > 5 else ""
            elif kind in ("note", "capture", "cv_none", "thread_unnamed", "end"):
                notes.append(line.rstrip("\n"))
    return names, unloaded, cv, modules, notes, memory


def minidump_string(text):
    data = text.encode("utf-16-le")
    return struct.pack("<I", len(data)) + data + b"\x00\x00"


class Appender:
    def __init__(self, data):
        self.buf = bytearray(data)

    def align(self, n=8):
        while len(self.buf) % n:
            self.buf.append(0)

    def append(self, blob, align=8):
        self.align(align)
        rva = len(self.buf)
        self.buf += blob
        return rva


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    raw_path, sidecar_path, out_path = sys.argv[1:]
    raw = open(raw_path, "rb").read()
    sig, ver, nstreams, dir_rva, checksum, stamp, flags = struct.unpack_from("<IIIIIIQ", raw, 0)
    if sig != MD_SIGNATURE:
        sys.exit(f"{raw_path}: not a minidump")
    directory = [struct.unpack_from("<III", raw, dir_rva + 12 * i) for i in range(nstreams)]
    present = {t for t, _, _ in directory if t}
    names, unloaded, cv, _modules, _notes, memory = parse_sidecar(sidecar_path)
    out = Appender(raw)

    # 1. CodeView records, matched by module base address.
    patched = 0
    for stype, size, rva in directory:
        if stype != MODULE_LIST:
            continue
        (count,) = struct.unpack_from("<I", raw, rva)
        for i in range(count):
            off = rva + 4 + 108 * i
            base = struct.unpack_from("<Q", raw, off)[0]
            cv_size, cv_rva = struct.unpack_from("<II", raw, off + 76)
            if cv_size != 0:
                continue  # the writer already filled it; keep it
            record = cv.get(base)
            if record is None:
                continue
            new_rva = out.append(record, 4)
            struct.pack_into("<II", out.buf, off + 76, len(record), new_rva)
            patched += 1

    # Thread ids actually present in the dump's thread list.
    dumped_tids = []
    for stype, size, rva in directory:
        if stype == THREAD_LIST:
            (count,) = struct.unpack_from("<I", raw, rva)
            dumped_tids = [struct.unpack_from("<I", raw, rva + 4 + 48 * i)[0] for i in range(count)]

    new_entries = []
    # 2. Unloaded module list, oldest unload first (ntdll's sequence order).
    if UNLOADED_MODULE_LIST not in present:
        entries = []
        for seq, base, size, checksum_, stamp_, name in sorted(unloaded):
            name_rva = out.append(minidump_string(name), 4)
            entries.append(struct.pack("<QIIII", base, size, checksum_, stamp_, name_rva))
        blob = struct.pack("<III", 12, 24, len(entries)) + b"".join(entries)
        new_entries.append((UNLOADED_MODULE_LIST, len(blob), out.append(blob, 8)))

    # 3. Thread names for the dumped threads that have one.
    if THREAD_NAMES not in present:
        records = []
        for tid in dumped_tids:
            if tid in names:
                name_rva = out.append(minidump_string(names[tid]), 4)
                records.append(struct.pack("<IQ", tid, name_rva))
        blob = struct.pack("<I", len(records)) + b"".join(records)
        new_entries.append((THREAD_NAMES, len(blob), out.append(blob, 8)))

    # 4. Memory for the wait analysis: a new memory list, Wine's descriptors
    # first (their bytes stay where Wine wrote them), then the kept ranges
    # that do not overlap them.
    added = 0
    if memory:
        for index, (stype, size, rva) in enumerate(directory):
            if stype != MEMORY_LIST:
                continue
            (count,) = struct.unpack_from("<I", raw, rva)
            old = [struct.unpack_from("<QII", raw, rva + 4 + 16 * i) for i in range(count)]
            ranges = [(start, start + length) for start, length, _ in old]
            descriptors = [struct.pack("<QII", *d) for d in old]
            for start, data in sorted(memory):
                end = start + len(data)
                if any(start < e and s < end for s, e in ranges):
                    continue
                data_rva = out.append(data, 8)
                descriptors.append(struct.pack("<QII", start, len(data), data_rva))
                ranges.append((start, end))
                added += 1
            blob = struct.pack("<I", len(descriptors)) + b"".join(descriptors)
            directory[index] = (MEMORY_LIST, len(blob), out.append(blob, 8))

    # New directory: Wine's entries (the memory list's moved), then ours.
    all_entries = list(directory) + new_entries
    new_dir_rva = out.append(b"".join(struct.pack("<III", *e) for e in all_entries), 8)
    struct.pack_into("<IIIIIIQ", out.buf, 0, sig, ver, len(all_entries), new_dir_rva, checksum, stamp,
                     flags | (MINIDUMP_WITH_UNLOADED_MODULES if unloaded else 0))
    with open(out_path, "wb") as f:
        f.write(out.buf)
    print(f"complete_dump: {out_path}: {patched} CodeView records, {len(unloaded)} unloaded modules, "
          f"{sum(1 for t in dumped_tids if t in names)} thread names, {added} memory ranges "
          f"({len(raw)} -> {len(out.buf)} bytes)")


if __name__ == "__main__":
    main()
