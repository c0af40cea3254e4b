#!/usr/bin/env python3
"""Writes a Windows x64 minidump whose threads stand in code of one DLL
that has only a PDB: the dump of the PDB benchmark (scripts/bench-native.sh).

    pdb-bench-dump.py DLL PROCS OUT [THREADS] [DEPTH]

DLL is the image (its CodeView record gives the PDB's name, GUID and age;
its section table the RVA of section 1), PROCS the output of
`llvm-pdbutil dump --symbols` on the PDB (its procedures' addresses and
sizes). Each thread's instruction pointer lies inside one procedure and its
stack holds DEPTH return addresses inside others, spread over the whole
image, so that a stack walk asks the symbols about THREADS * DEPTH places
in many compilation units, as a dump of a busy process does.
"""
import random
import re
import struct
import sys

BASE = 0x1_8000_0000


def codeview(image):
    at = image.find(b"RSDS")
    if at < 0:
        sys.exit(f"{sys.argv[1]}: no CodeView record")
    end = image.index(b"\0", at + 24)
    return image[at:end + 1]


def sections(image):
    pe = struct.unpack_from("<I", image, 0x3C)[0]
    count = struct.unpack_from("<H", image, pe + 6)[0]
    optional = struct.unpack_from("<H", image, pe + 20)[0]
    size_of_image = struct.unpack_from("<I", image, pe + 24 + 56)[0]
    table = pe + 24 + optional
    vas = [struct.unpack_from("<I", image, table + 40 * n + 12)[0] for n in range(count)]
    return vas, size_of_image


def procedures(text, vas):
    found = []
    # llvm-pdbutil writes `addr = SECTION:OFFSET` in decimal.
    for m in re.finditer(r"addr = (\d+):(\d+), code size = (\d+)", text):
        section, offset, size = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if 1 <= section <= len(vas) and size >= 16:
            found.append((vas[section - 1] + offset, size))
    return found


def main():
    dll, procs, out = sys.argv[1:4]
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 32
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 24
    image = open(dll, "rb").read()
    cv = codeview(image)
    vas, size_of_image = sections(image)
    found = procedures(open(procs, encoding="utf-8", errors="replace").read(), vas)
    if len(found) < threads * (depth + 1):
        sys.exit(f"{procs}: only {len(found)} procedures")
    rng = random.Random(12)
    rng.shuffle(found)

    blob = bytearray()

    def put(data):
        while len(blob) % 8:
            blob.append(0)
        at = 32 + len(blob)
        blob.extend(data)
        return at

    def string(text):
        raw = text.encode("utf-16-le")
        return put(struct.pack("<I", len(raw)) + raw + b"\0\0")

    # Threads: contexts and stacks.
    thread_entries, memory = [], []
    picks = iter(found)
    for n in range(threads):
        stack_base = 0x10_0000 + n * 0x10_0000
        ip_proc = next(picks)
        words = []
        for _ in range(depth):
            start, size = next(picks)
            words.append(BASE + start + rng.randrange(8, size))
            words.append(0x7FFF_0000_0000 + rng.randrange(0, 1 << 20) * 8)  # not code
        stack = b"".join(struct.pack("<Q", w) for w in words)
        context = bytearray(1232)
        struct.pack_into("<I", context, 0x30, 0x10001F)
        struct.pack_into("<Q", context, 0x98, stack_base)  # rsp
        struct.pack_into("<Q", context, 0xA0, 0)  # rbp
        struct.pack_into("<Q", context, 0xF8, BASE + ip_proc[0] + rng.randrange(4, ip_proc[1]))
        ctx_at = put(bytes(context))
        stack_at = put(stack)
        memory.append((stack_base, len(stack), stack_at))
        thread_entries.append(
            struct.pack("<IIIIQQIIII", 1000 + n, 0, 0x20, 0, 0x7FFE_0000_0000 + n * 0x2000,
                        stack_base, len(stack), stack_at, len(context), ctx_at))

    name_at = string("C:\\bench\\" + cv[24:-1].decode().replace(".pdb", ".dll"))
    cv_at = put(cv)
    module = struct.pack("<QIIII", BASE, size_of_image, 0, 0x5F00_0000, name_at)
    module += b"\0" * 52 + struct.pack("<II", len(cv), cv_at) + b"\0" * 24
    csd_at = string("")
    system = struct.pack("<HHHBBIIIII", 9, 6, 0, 2, 1, 10, 0, 19045, 2, csd_at)
    system += struct.pack("<HH", 0x100, 0) + b"\0" * 24

    streams = [
        (3, put(struct.pack("<I", threads) + b"".join(thread_entries)), 4 + 48 * threads),
        (4, put(struct.pack("<I", 1) + module), 4 + len(module)),
        (5, put(struct.pack("<I", len(memory)) + b"".join(
            struct.pack("<QII", start, size, at) for start, size, at in memory)), 4 + 16 * len(memory)),
        (7, put(system), len(system)),
    ]
    directory_at = put(b"".join(struct.pack("<III", kind, size, at) for kind, at, size in streams))
    header = struct.pack("<IIIIIIQ", 0x504D444D, 0xA793, len(streams), directory_at, 0, 0x5F00_0000, 0)
    with open(out, "wb") as f:
        f.write(header + blob)


if __name__ == "__main__":
    main()
