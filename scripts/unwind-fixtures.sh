#!/usr/bin/env bash
# Rebuilds tests/data/unwind/windows/: three of the Windows samples captured
# again together with the binaries and PDBs of the very build that ran, and
# the Breakpad symbols dump_syms makes from them, so that the walk from the
# binaries (.pdata/.xdata) can be compared with the walk from .sym files on
# the same dumps (tests/unwind.rs).
#
# The sample-dumps/ build is reproducible on one machine only (the PDB and
# the image hash the compiler's paths and versions), so the committed
# samples cannot be matched by rebuilding here: this captures new dumps.
# Uses sample-dumps/regenerate.sh's build and scenario functions with a
# scratch WINEPREFIX and build folder; needs what that script needs (wine,
# clang-14, lld-14, mingw-w64, dump_syms). CI never runs this: the files are
# committed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/tests/data/unwind/windows"
work="$(mktemp -d)"
cleanup() {
    WINEPREFIX="$work/prefix" wineserver -k 2>/dev/null || true
    WINEPREFIX="$work/prefix" wineserver -w 2>/dev/null || true
    rm -rf "$work" || true
}
trap cleanup EXIT

# regenerate.sh without its last line (the call to main).
sed '$d' "$root/sample-dumps/regenerate.sh" >"$work/lib.sh"
export DT_BUILD_DIR="$work/build" DT_WINEPREFIX="$work/prefix"
mkdir -p "$work/samples/raw"
cp -r "$root/sample-dumps/src" "$work/samples/"
(
    # shellcheck disable=SC1091
    source "$work/lib.sh"
    HERE="$work/samples" SRC="$work/samples/src" RAW_DIR="$work/samples/raw"
    WANT="hip-unregister-fatbinary-hang hip-dllmain-detach-hang dxc-after-unload"
    ensure_toolchain
    build_all
    fresh_prefix
    install_into "dumptriage/tools" "$BUILD/bin/tools/crashcap.dll" "$BUILD/bin/tools/capture.exe"
    scenario_hip
    scenario_ort
)

rm -rf "$out" && mkdir -p "$out/dumps" "$out/binaries" "$out/sym"
for name in hip-unregister-fatbinary-hang hip-dllmain-detach-hang dxc-after-unload; do
    cp "$work/samples/$name.dmp" "$out/dumps/"
done
bin="$work/build/bin"
for module in hip/hip_repro.exe hip/hip_detach.exe hip/amdhip64_6.dll \
    ort/ort_webgpu_app.exe ort/onnxruntime.dll ort/webgpu_dawn.dll; do
    cp "$bin/$module" "$bin/${module%.*}.pdb" "$out/binaries/"
    dump_syms "$bin/$module" >"$work/module.sym" 2>/dev/null
    read -r _ _ _ id debug_file <"$work/module.sym"
    mkdir -p "$out/sym/$debug_file/$id"
    mv "$work/module.sym" "$out/sym/$debug_file/$id/${debug_file%.pdb}.sym"
done
du -sh "$out"/*
