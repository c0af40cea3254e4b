#!/usr/bin/env python3
"""Grows a real Breakpad .sym file to a given size, for benchmarks.

usage: grow-sym.py IN.sym OUT.sym MEGABYTES

OUT is IN (so the frames of a real dump of that module keep their real
names and CFI) followed by generated records of the shapes big C++ builds
give dump_syms: FUNC records with mangled-looking names, LINE records,
INLINE records nesting two levels deep with their INLINE_ORIGINs, FILE
records, PUBLIC records, and a STACK CFI INIT block with its STACK CFI rows
for every function. The generated functions lie above every address IN
uses, so they never overlap IN's records: a parser reads them all, and an
address of the real module is answered from IN's.

The output is deterministic for a given input and size.
"""
import random
import sys

HEX = "0123456789abcdef"


def highest_address(path):
    """The first address above every record of the file."""
    top = 0
    with open(path, "rb") as f:
        for line in f:
            parts = line.split()
            try:
                if line.startswith(b"FUNC ") or line.startswith(b"STACK CFI INIT "):
                    skip = 2 if parts[1] == b"m" else 1
                    skip = 3 if line.startswith(b"STACK") else skip
                    top = max(top, int(parts[skip], 16) + int(parts[skip + 1], 16))
                elif line.startswith(b"PUBLIC "):
                    skip = 2 if parts[1] == b"m" else 1
                    top = max(top, int(parts[skip], 16) + 1)
            except (IndexError, ValueError):
                continue
    return top


def ids_in_use(path):
    files = origins = 0
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"FILE "):
                files = max(files, int(line.split()[1]) + 1)
            elif line.startswith(b"INLINE_ORIGIN "):
                origins = max(origins, int(line.split()[1]) + 1)
    return files, origins


def main():
    source, target, megabytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    limit = megabytes << 20
    rng = random.Random(1)
    address = (highest_address(source) + 0xFFFFF) & ~0xFFFFF
    first_file, first_origin = ids_in_use(source)
    words = ["llvm", "clang", "Sema", "Parser", "Lexer", "CodeGen", "MachineInstr",
             "SelectionDAG", "Builder", "Analysis", "Pass", "Manager", "Value",
             "Instruction", "BasicBlock", "Function", "Module", "Type", "Context",
             "Scheduler", "Register", "Allocator", "Emitter", "Printer", "Visitor"]

    def name():
        parts = [rng.choice(words) for _ in range(rng.randint(2, 4))]
        args = ", ".join(rng.choice(["unsigned int", "llvm::StringRef", "const llvm::Twine&",
                                     "llvm::ArrayRef<llvm::Value*>", "bool", "int",
                                     "std::unique_ptr<llvm::Module>"])
                         for _ in range(rng.randint(0, 3)))
        return "::".join(parts) + f"::{rng.choice(words).lower()}{rng.randint(0, 999)}({args})"

    with open(source, "rb") as f, open(target, "wb") as out:
        while chunk := f.read(1 << 20):
            out.write(chunk)
        written = out.tell()
        files = 2000
        for n in range(files):
            line = f"FILE {first_file + n} /build/llvm/lib/{rng.choice(words)}/{rng.choice(words)}{n}.cpp\n"
            out.write(line.encode())
        origins = 20000
        for n in range(origins):
            out.write(f"INLINE_ORIGIN {first_origin + n} {name()}\n".encode())
        written = out.tell()
        batch = []
        while written < limit:
            size = rng.randint(0x40, 0x600) & ~0xF
            lines = []
            line_no = rng.randint(10, 5000)
            file_id = first_file + rng.randrange(files)
            at = address
            end = address + size
            # INLINE records: an inlined call in the middle, one nested in it.
            inline_at = address + (size // 4 & ~0xF)
            inline_size = max(0x10, size // 4 & ~0xF)
            lines.append(f"FUNC {address:x} {size:x} 0 {name()}\n")
            lines.append(f"INLINE 0 {line_no + 3} {file_id} {first_origin + rng.randrange(origins)}"
                         f" {inline_at:x} {inline_size:x}\n")
            lines.append(f"INLINE 1 {line_no + 40} {first_file + rng.randrange(files)}"
                         f" {first_origin + rng.randrange(origins)} {inline_at + 8:x} 8\n")
            while at < end:
                step = min(rng.choice((4, 6, 8, 12, 16, 24)), end - at)
                lines.append(f"{at:x} {step:x} {line_no} {file_id}\n")
                line_no += rng.randint(0, 3)
                at += step
            lines.append(f"STACK CFI INIT {address:x} {size:x} .cfa: $rsp 8 + .ra: .cfa -8 + ^\n")
            depth = 8
            for offset, reg in ((1, "rbp"), (4, "rbx"), (6, "r12"), (8, "r14"), (10, "r15")):
                depth += 8
                lines.append(f"STACK CFI {address + offset:x} .cfa: $rsp {depth} + ${reg}: .cfa -{depth} + ^\n")
            if rng.random() < 0.05:
                lines.append(f"PUBLIC {address:x} 0 {name()}\n")
            text = "".join(lines).encode()
            batch.append(text)
            written += len(text)
            address = end + rng.choice((0, 0, 0x10, 0x20))
            if len(batch) >= 4096:
                out.write(b"".join(batch))
                batch.clear()
        out.write(b"".join(batch))


if __name__ == "__main__":
    main()
