# Prints every thread's frames as gdb sees them, one per line, for
# tests/cores.rs to compare with dumptriage's walk of the same core:
#   THREAD <lwp>
#   <kind> <pc> <function start or 0> <name or ??>
# kind is normal, inline, tailcall (gdb rebuilds those from DWARF
# call-site records, not from memory), sigtramp or other; pc is gdb's
# (a caller's is its return address).
import re

import gdb

KINDS = {
    gdb.NORMAL_FRAME: "normal",
    gdb.INLINE_FRAME: "inline",
    gdb.TAILCALL_FRAME: "tailcall",
    gdb.SIGTRAMP_FRAME: "sigtramp",
}


def start_of(frame, lookup):
    function = frame.function()
    if function is not None and frame.type() == gdb.NORMAL_FRAME:
        try:
            block = frame.block()
            while block.function is None or block.superblock.function is not None:
                block = block.superblock
            return block.start
        except RuntimeError:
            pass
    text = gdb.execute("info symbol %d" % lookup, to_string=True)
    found = re.match(r"(\S+)(?: \+ (\d+))? in section", text)
    if found:
        return lookup - int(found.group(2) or 0)
    return 0


for inferior in gdb.inferiors():
    for thread in sorted(inferior.threads(), key=lambda t: t.ptid[1]):
        thread.switch()
        print("THREAD %d" % thread.ptid[1])
        frame = gdb.newest_frame()
        depth = 0
        while frame is not None and depth < 256:
            pc = frame.pc()
            lookup = pc if depth == 0 else pc - 1
            kind = KINDS.get(frame.type(), "other")
            print("%s %d %d %s" % (kind, pc, start_of(frame, lookup), frame.name() or "??"))
            try:
                frame = frame.older()
            except gdb.error:
                break
            depth += 1
