#!/usr/bin/env python3
"""Lays out the binaries and PDBs of the sample dumps as a Microsoft symbol
store (symstore's layout), for the poor twins of the samples.

    make_store.py STORE BUILD_DIR WINE_DLL_DIR DUMP...

For every module of the given dumps, the file with the same TimeDateStamp and
SizeOfImage is looked for among the PE files under BUILD_DIR (the programs
built by regenerate.sh, with their PDBs beside them) and in WINE_DLL_DIR
(Wine's own DLLs). It is stored as symstore stores it:

    NAME/TTTTTTTTs.../NAME       TimeDateStamp as %08X, SizeOfImage as %x
    PDB/GUIDAGE/PDB              GUID upper case, age as %X

with the file name spelled as the file is spelled, so the store and the
dump differ in case where Windows' own files do (KERNEL32.dll in the store,
kernel32.dll in the dump).

System DLLs go in as binaries only, as a user has them: Wine builds its DLLs
with DWARF and a COFF symbol table, which a Windows system DLL does not
carry, so both are cleared in the stored copy. The headers, the code, the
exports and the unwind tables (.pdata/.xdata) are kept byte for byte, and
so is the identity (TimeDateStamp, SizeOfImage).
"""

import os
import shutil
import struct
import sys

# How Windows itself spells these files (symstore keeps the given case).
WINDOWS_SPELLING = {
    "kernel32.dll": "KERNEL32.dll",
    "kernelbase.dll": "KERNELBASE.dll",
    "dbghelp.dll": "dbghelp.dll",
    "ntdll.dll": "ntdll.dll",
    "msvcrt.dll": "msvcrt.dll",
    "ucrtbase.dll": "ucrtbase.dll",
}


def pe_headers(data):
    e = struct.unpack_from("<I", data, 0x3C)[0]
    if data[e : e + 4] != b"PE\0\0":
        raise ValueError("not a PE file")
    nsec, ts, psym, nsym, optsz = struct.unpack_from("<HIIIH", data, e + 6)
    size_of_image = struct.unpack_from("<I", data, e + 24 + 56)[0]
    return e, nsec, ts, psym, nsym, optsz, size_of_image


def code_id(path):
    with open(path, "rb") as f:
        data = f.read(4096)
    _, _, ts, _, _, _, size = pe_headers(data)
    return ts, size


def codeview(data):
    """(pdb name, GUIDAGE) from the image's RSDS record, or None."""
    e, nsec, _, _, _, optsz, _ = pe_headers(data)
    opt = e + 24
    debug_rva, debug_size = struct.unpack_from("<II", data, opt + 112 + 6 * 8)
    sections = []
    for i in range(nsec):
        _, vs, va, rs, rp = struct.unpack_from("<8sIIII", data, opt + optsz + 40 * i)
        sections.append((va, max(vs, rs), rp))

    def offset(rva):
        for va, size, rp in sections:
            if va <= rva < va + size:
                return rva - va + rp
        return None

    start = offset(debug_rva) if debug_rva else None
    if start is None:
        return None
    for k in range(debug_size // 28):
        entry = struct.unpack_from("<IIHHIIII", data, start + 28 * k)
        kind, raw_ptr = entry[4], entry[7]
        if kind != 2 or data[raw_ptr : raw_ptr + 4] != b"RSDS":
            continue
        g = data[raw_ptr + 4 : raw_ptr + 20]
        age = struct.unpack_from("<I", data, raw_ptr + 20)[0]
        name = data[raw_ptr + 24 : data.index(b"\0", raw_ptr + 24)].decode()
        d1, d2, d3 = struct.unpack_from("<IHH", g)
        guid = "%08X%04X%04X%s" % (d1, d2, d3, g[8:].hex().upper())
        return os.path.basename(name.replace("\\", "/")), "%s%X" % (guid, age)
    return None


def strip_system_dll(data):
    """Clears DWARF sections and the COFF symbol table, in place; sizes,
    offsets and the identity stay as they are."""
    data = bytearray(data)
    e, nsec, _, psym, nsym, optsz, _ = pe_headers(data)
    strtab = psym + 18 * nsym if psym else None
    sec = e + 24 + optsz
    for i in range(nsec):
        raw_name, _, _, rs, rp = struct.unpack_from("<8sIIII", data, sec + 40 * i)
        name = raw_name.rstrip(b"\0").decode()
        if name.startswith("/") and strtab is not None:
            off = strtab + int(name[1:])
            name = data[off : data.index(b"\0", off)].decode()
        if name.startswith(".debug_") and rp:
            data[rp : rp + rs] = bytes(rs)
    if psym and nsym:
        # Keep the string table (long section names live there), drop the
        # symbols: move it to where the symbols began and clear the rest.
        strsize = struct.unpack_from("<I", data, strtab)[0]
        table = bytes(data[strtab : strtab + strsize])
        end = strtab + strsize
        data[psym:end] = bytes(end - psym)
        data[psym : psym + len(table)] = table
        struct.pack_into("<I", data, e + 16, 0)  # NumberOfSymbols
    return bytes(data)


def dump_modules(path):
    """(file name, TimeDateStamp, SizeOfImage) of every module of a dump."""
    with open(path, "rb") as f:
        d = f.read()
    count, rva = struct.unpack_from("<II", d, 8)
    for i in range(count):
        kind, _, where = struct.unpack_from("<III", d, rva + 12 * i)
        if kind != 4:
            continue
        for j in range(struct.unpack_from("<I", d, where)[0]):
            _, size, _, ts, name_rva = struct.unpack_from("<QIIII", d, where + 4 + 108 * j)
            length = struct.unpack_from("<I", d, name_rva)[0]
            name = d[name_rva + 4 : name_rva + 4 + length].decode("utf-16le")
            yield name.replace("\\", "/").rsplit("/", 1)[-1], ts, size


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    store, build, wine = sys.argv[1:4]
    dumps = sys.argv[4:]
    files = {}
    for root, _, names in os.walk(build):
        for n in names:
            if n.lower().endswith((".exe", ".dll", ".pyd", ".node")):
                p = os.path.join(root, n)
                files[code_id(p)] = (p, False)
    wanted = {}
    for dump in dumps:
        for name, ts, size in dump_modules(dump):
            wanted[(ts, size)] = name
    for n in os.listdir(wine):
        p = os.path.join(wine, n)
        if n.lower().endswith(".dll") and os.path.isfile(p):
            ident = code_id(p)
            if ident in wanted and ident not in files:
                files[ident] = (p, True)
    if os.path.isdir(store):
        shutil.rmtree(store)
    missing = []
    for (ts, size), name in sorted(wanted.items(), key=lambda kv: kv[1].lower()):
        found = files.get((ts, size))
        if found is None:
            missing.append(name)
            continue
        path, system = found
        with open(path, "rb") as f:
            data = f.read()
        spelled = WINDOWS_SPELLING.get(name.lower(), os.path.basename(path)) if system else os.path.basename(path)
        target = os.path.join(store, spelled, "%08X%x" % (ts, size), spelled)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(strip_system_dll(data) if system else data)
        if system:
            continue
        cv = codeview(data)
        pdb = os.path.join(os.path.dirname(path), cv[0]) if cv else None
        if pdb and os.path.isfile(pdb):
            dest = os.path.join(store, cv[0], cv[1], cv[0])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(pdb, dest)
    for name in sorted(set(missing)):
        print("make_store: no file for %s" % name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
