#!/usr/bin/env bash
# Rebuilds the native symbol fixtures of tests/data/native/ from their sources
# in tests/data/native/src/, and prints the identities and function offsets the
# tests rely on (update tests/common/symbol_fixtures.rs if they change).
#
# Needs: clang-14 and lld-14 (PE + PDB), gcc and binutils (ELF + split debug
# file), llvm-readobj-14 and llvm-pdbutil-14 (to print what was built).
# CI never runs this: the built files are committed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/tests/data/native"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Build in a scratch folder so no path of this checkout ends up in the files.
cp "$out/src/fakehip.c" "$out/src/fakeexit.c" "$work/"
cd "$work"

# PE + PDB, as a MinGW clang build with CodeView debug info makes them. A fixed
# timestamp and a relative PDB path keep the build reproducible.
clang-14 --target=x86_64-w64-mingw32 -fuse-ld=lld-14 -g -gcodeview -O1 \
    -shared -nostdlib -Wl,--entry=DllMain \
    -Wl,--pdb=fakehip.pdb -Wl,-Xlink=/pdbaltpath:%_PDB% \
    -Wl,-Xlink=/timestamp:1700000000 \
    -o fakehip.dll fakehip.c

# ELF with a GNU build id; its DWARF goes into a separate file and the
# library keeps only a .gnu_debuglink to it (what Debian's -dbg packages do).
gcc -g -O1 -shared -fPIC -fno-asynchronous-unwind-tables \
    -Wl,--build-id=sha1 -Wl,-z,noseparate-code \
    -o libfakeexit.so fakeexit.c
objcopy --only-keep-debug libfakeexit.so libfakeexit.so.debug
objcopy --strip-debug --strip-unneeded \
    --add-gnu-debuglink=libfakeexit.so.debug libfakeexit.so

cp fakehip.dll fakehip.pdb libfakeexit.so libfakeexit.so.debug "$out/"
ls -l "$out"
llvm-readobj-14 --file-headers --coff-debug-directory fakehip.dll |
    grep -E 'TimeDateStamp|SizeOfImage|PDBGUID|PDBAge' | sort -u
llvm-pdbutil-14 dump --symbols fakehip.pdb | grep -A1 PROC32 | grep -E 'PROC32|addr'
readelf -n libfakeexit.so | grep 'Build ID'
nm libfakeexit.so.debug | grep -iE ' t (__run|__cxa|_wait)'
