#!/usr/bin/env python3
"""Print the stream directory and the key contents of a minidump (independent
check of what complete_dump.py wrote; no third-party modules).

usage: mdmp_info.py DUMP [--json]
"""
import json
import struct
import sys
import uuid

STREAM_NAMES = {
    3: "ThreadList", 4: "ModuleList", 5: "MemoryList", 6: "Exception", 7: "SystemInfo",
    9: "Memory64List", 14: "UnloadedModuleList", 15: "MiscInfo", 16: "MemoryInfoList",
    17: "ThreadInfoList", 24: "ThreadNames",
}


def read_string(data, rva):
    (n,) = struct.unpack_from("<I", data, rva)
    return data[rva + 4 : rva + 4 + n].decode("utf-16-le", "replace")


def cv_info(data, size, rva):
    if size < 24 or data[rva : rva + 4] != b"RSDS":
        return None
    guid = uuid.UUID(bytes_le=bytes(data[rva + 4 : rva + 20]))
    (age,) = struct.unpack_from("<I", data, rva + 20)
    name = data[rva + 24 : rva + size].split(b"\0")[0].decode("utf-8", "replace")
    return {"debug_id": guid.hex.upper() + format(age, "X"), "debug_file": name}


def parse(path):
    data = open(path, "rb").read()
    sig, ver, n, dir_rva, _ck, stamp, flags = struct.unpack_from("<IIIIIIQ", data, 0)
    assert sig == 0x504D444D, "not a minidump"
    info = {"file": path, "flags": hex(flags), "streams": [], "threads": [], "modules": [],
            "unloaded": [], "thread_names": {}, "exception": None}
    for i in range(n):
        t, size, rva = struct.unpack_from("<III", data, dir_rva + 12 * i)
        info["streams"].append({"type": t, "name": STREAM_NAMES.get(t, str(t)), "size": size, "rva": rva})
        if t == 3:
            (cnt,) = struct.unpack_from("<I", data, rva)
            for k in range(cnt):
                tid, suspend, prio_class, prio, teb, stk_start, stk_size, stk_rva, ctx_size, ctx_rva = \
                    struct.unpack_from("<IIIIQQIIII", data, rva + 4 + 48 * k)
                rip = rsp = None
                if ctx_size >= 0x100:
                    rsp = struct.unpack_from("<Q", data, ctx_rva + 0x98)[0]
                    rip = struct.unpack_from("<Q", data, ctx_rva + 0xF8)[0]
                info["threads"].append({"tid": tid, "stack_start": hex(stk_start), "stack_size": stk_size,
                                        "rip": hex(rip) if rip is not None else None,
                                        "rsp": hex(rsp) if rsp is not None else None})
        elif t == 4:
            (cnt,) = struct.unpack_from("<I", data, rva)
            for k in range(cnt):
                off = rva + 4 + 108 * k
                base, size_, ck, ts, name_rva = struct.unpack_from("<QIIII", data, off)
                cv_size, cv_rva = struct.unpack_from("<II", data, off + 76)
                info["modules"].append({"name": read_string(data, name_rva), "base": hex(base),
                                        "size": hex(size_), "timestamp": hex(ts),
                                        "codeview": cv_info(data, cv_size, cv_rva)})
        elif t == 14:
            hdr, esz, cnt = struct.unpack_from("<III", data, rva)
            for k in range(cnt):
                base, size_, ck, ts, name_rva = struct.unpack_from("<QIIII", data, rva + hdr + esz * k)
                info["unloaded"].append({"name": read_string(data, name_rva), "base": hex(base),
                                         "end": hex(base + size_), "checksum": hex(ck), "timestamp": hex(ts)})
        elif t == 24:
            (cnt,) = struct.unpack_from("<I", data, rva)
            for k in range(cnt):
                tid, name_rva = struct.unpack_from("<IQ", data, rva + 4 + 12 * k)
                info["thread_names"][tid] = read_string(data, name_rva)
        elif t == 6:
            tid, _align, code, eflags, rec, addr, nparams = struct.unpack_from("<IIIIQQI", data, rva)
            params = list(struct.unpack_from("<15Q", data, rva + 8 + 32))[:nparams]
            info["exception"] = {"thread": tid, "code": hex(code), "address": hex(addr),
                                 "params": [hex(p) for p in params]}
    return info


def main():
    info = parse(sys.argv[1])
    if "--json" in sys.argv:
        print(json.dumps(info, indent=1))
        return
    print(f"{info['file']}  flags={info['flags']}")
    print("streams:", ", ".join(f"{s['name']}({s['type']})" for s in info["streams"]))
    if info["exception"]:
        e = info["exception"]
        print(f"exception: thread {e['thread']} code {e['code']} at {e['address']} params {e['params']}")
    for t in info["threads"]:
        print(f"thread {t['tid']:>6} name={info['thread_names'].get(t['tid'], '-')!r} rip={t['rip']}")
    for m in info["modules"]:
        cv = m["codeview"]
        print(f"module {m['base']:>14} {m['size']:>9} {m['name']}  "
              + (f"{cv['debug_file']} {cv['debug_id']}" if cv else "(no CodeView)"))
    for u in info["unloaded"]:
        print(f"unloaded {u['base']}-{u['end']} {u['name']} ts={u['timestamp']}")


if __name__ == "__main__":
    main()
