# Prints every thread's frames as gdb sees them, one per line, for
# tests/cores.rs to compare with dumptriage's walk of the same core:
#   THREAD <lwp>
#   <kind> <pc> <function start or 0> <shared library or -> <name or ??>
# kind is normal, inline, tailcall (gdb rebuilds those from DWARF
# call-site records, not from memory), sigtramp or other; pc is gdb's
# (a caller's is its return address); the shared library is the one of
# gdb's list (the dynamic linker's) that holds the pc: `-` for the program
# and for a library gdb does not know.
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
            lookup = pc if depth == 0 else max(pc - 1, 0)
            kind = KINDS.get(frame.type(), "other")
            try:
                solib = gdb.solib_name(lookup) or "-"
            except (gdb.error, OverflowError):
                solib = "-"
            print(
                "%s %d %d %s %s"
                % (kind, pc, start_of(frame, lookup), solib.replace(" ", "_"), frame.name() or "??")
            )
            try:
                frame = frame.older()
            except gdb.error:
                break
            depth += 1
