#!/usr/bin/env bash
# Rebuild every sample minidump in this folder from scratch, under Wine.
#
#   bash sample-dumps/regenerate.sh            # all samples
#   bash sample-dumps/regenerate.sh hip-unregister-fatbinary-hang dxc-after-unload
#
# Steps: install the toolchain if missing (apt-get: wine, wine64, mingw-w64,
# clang-14, lld-14; cargo: dump_syms), create a fresh WINEPREFIX under /tmp,
# build the programs, DLLs and capture tools with clang-14 + lld (CodeView/PDB),
# run each scenario under Wine, capture its minidump (in process from the crash
# handler, or out of process on a hung PID), complete it with the streams Wine
# leaves out (from the sidecar read off the live process), write Breakpad
# symbols, and verify the result.
#
# The build is reproducible (lld /Brepro, directory-less PDB paths): the same
# sources give the same debug ids and PE timestamps, so symbols/ written by a
# partial run still matches the dumps it did not recapture. After a source change,
# run it in full. Scratch space is /tmp only.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/src"
BUILD="${DT_BUILD_DIR:-/tmp/dumptriage-sample-build}"
export WINEPREFIX="${DT_WINEPREFIX:-/tmp/dumptriage-wineprefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
DRIVE_C="$WINEPREFIX/drive_c"
RAW_DIR="$HERE/raw"
SYM_DIR="$HERE/symbols"
GCC_LIB=""

say() { printf '\n== %s\n' "$*"; }
die() { printf 'regenerate.sh: error: %s\n' "$*" >&2; exit 1; }

# ------------------------------------------------------------ toolchain ----
ensure_toolchain() {
    local missing=()
    command -v wine >/dev/null || missing+=(wine wine64)
    command -v clang-14 >/dev/null || missing+=(clang-14)
    [ -x /usr/bin/ld.lld-14 ] || missing+=(lld-14)
    command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]} with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine wine64 gcc-mingw-w64-x86-64 clang-14 lld-14
    fi
    GCC_LIB="$(ls -d /usr/lib/gcc/x86_64-w64-mingw32/*-win32 2>/dev/null | sort -V | tail -1)"
    [ -n "$GCC_LIB" ] || die "no /usr/lib/gcc/x86_64-w64-mingw32/*-win32 (gcc-mingw-w64-x86-64)"
    export PATH="$HOME/.cargo/bin:$PATH"
    if ! command -v dump_syms >/dev/null; then
        say "installing dump_syms with cargo"
        cargo install --locked dump_syms
    fi
    command -v python3 >/dev/null || die "python3 is needed for the dump fix-up"
}

# ---------------------------------------------------------------- build ----
# Flags: CodeView + PDB for every module, frame pointers, no inlining, so the
# stacks in the dumps read like the source.
CFLAGS_COMMON=(--target=x86_64-w64-mingw32 -g -gcodeview -O0 -fomit-frame-pointer
               -fno-inline -Wall -Wno-unused-function -Wno-unused-command-line-argument -D_WIN32_WINNT=0x0A00 -DUNICODE -D_UNICODE)
CXXFLAGS_EXTRA=(-fno-exceptions -fno-rtti -fno-threadsafe-statics -std=c++17)

# build_pe OUT.(exe|dll) SRC... [-- extra link args]
# PDB is OUT's stem + .pdb; the CodeView record names the PDB without a
# directory (/pdbaltpath:%_PDB%), as release builds on Windows do.
build_pe() {
    local out="$1"; shift
    local srcs=() extra=() seen_sep=0
    for a in "$@"; do
        if [ "$a" = "--" ]; then seen_sep=1; continue; fi
        if [ $seen_sep = 1 ]; then extra+=("$a"); else srcs+=("$a"); fi
    done
    local dir stem kind=()
    dir="$(dirname "$out")"; stem="$(basename "$out")"; stem="${stem%.*}"
    case "$out" in *.dll|*.pyd|*.node) kind=(-shared -Wl,--out-implib,"$BUILD/lib/lib$stem.a");; esac
    mkdir -p "$dir" "$BUILD/lib"
    local objs=()
    for s in "${srcs[@]}"; do
        local o="$BUILD/obj/$stem/$(basename "$s").o"
        mkdir -p "$(dirname "$o")"
        case "$s" in
            *.cpp) clang-14 -x c++ "${CFLAGS_COMMON[@]}" "${CXXFLAGS_EXTRA[@]}" -I"$SRC/capture" -c "$s" -o "$o" ;;
            *.c)   clang-14 -x c "${CFLAGS_COMMON[@]}" -std=c11 -I"$SRC/capture" -c "$s" -o "$o" ;;
        esac
        objs+=("$o")
    done
    clang-14 --target=x86_64-w64-mingw32 -fuse-ld=/usr/bin/ld.lld-14 -g \
        -L"$GCC_LIB" -L"$BUILD/lib" "${kind[@]}" "${objs[@]}" -o "$out" \
        -Wl,--pdb="$dir/$stem.pdb" -Wl,-Xlink=-pdbaltpath:%_PDB% -Wl,-Xlink=-Brepro "${extra[@]}"
    BUILT_PES+=("$out")
}

BUILT_PES=()

build_all() {
    say "building (clang-14 + lld, CodeView) into $BUILD"
    rm -rf "$BUILD"; mkdir -p "$BUILD"
    local B="$BUILD/bin"
    # capture tooling
    build_pe "$B/tools/crashcap.dll" "$SRC/capture/crashcap.c" "$SRC/capture/dtcollect.c" -- -ldbghelp -lpsapi -Wl,--image-base=0x18f000000
    build_pe "$B/tools/capture.exe" "$SRC/capture/capture.c" "$SRC/capture/dtcollect.c" "$SRC/capture/dtmemory.c" -- -municode -ldbghelp -lpsapi -lntdll
    local S="$SRC/scenarios"
    # Every DLL gets its own preferred base, as shipped DLLs do.
    base() { echo "-Wl,--image-base=$1"; }
    # HIP (ROCm) family
    build_pe "$B/hip/amdhip64_6.dll" "$S/hip/amdhip64.cpp" -- "$(base 0x18b000000)"
    local mode exe
    for pair in FATBIN:hip_repro DETACH:hip_detach PAL:hip_pal WORK_HANG:hip_train_step HEALTHY:hip_service; do
        mode="${pair%%:*}"; exe="${pair##*:}"
        mkdir -p "$BUILD/obj/$exe"
        clang-14 -x c "${CFLAGS_COMMON[@]}" -std=c11 -DHIP_MODE_$mode -c "$S/hip/hip_app.c" \
            -o "$BUILD/obj/$exe/hip_app.o"
        clang-14 --target=x86_64-w64-mingw32 -fuse-ld=/usr/bin/ld.lld-14 -g \
            -L"$GCC_LIB" -L"$BUILD/lib" "$BUILD/obj/$exe/hip_app.o" -o "$B/hip/$exe.exe" \
            -Wl,--pdb="$B/hip/$exe.pdb" -Wl,-Xlink=-pdbaltpath:%_PDB% -Wl,-Xlink=-Brepro -lamdhip64_6
        BUILT_PES+=("$B/hip/$exe.exe")
    done
    # PyTorch's ROCm build: the module constructor lives in torch_hip.dll
    build_pe "$B/hip/torch_hip.dll" "$S/hip/torch_hip.c" -- "$(base 0x18d000000)" -lamdhip64_6
    build_pe "$B/hip/hip_torch_app.exe" "$S/hip/hip_torch_app.c"
    # WinML under Python
    build_pe "$B/winml/Microsoft.Windows.AI.MachineLearning.dll" "$S/winml/winml.cpp" -- "$(base 0x182000000)"
    build_pe "$B/winml/_ctypes.pyd" "$S/winml/ctypes.c" -- "$(base 0x181000000)"
    build_pe "$B/winml/python312.dll" "$S/winml/python312.c" -- "$(base 0x180000000)"
    build_pe "$B/winml/python.exe" "$S/winml/python.c" -- -municode -lpython312 -lcrashcap
    # ONNX Runtime + WebGPU (Dawn) + DXC
    build_pe "$B/ort/dxil.dll" "$S/webgpu/dxil.c" -- "$(base 0x186000000)"
    build_pe "$B/ort/dxcompiler.dll" "$S/webgpu/dxcompiler.c" -- "$(base 0x185000000)"
    build_pe "$B/ort/webgpu_dawn.dll" "$S/webgpu/webgpu_dawn.cpp" -- "$(base 0x184000000)"
    build_pe "$B/ort/onnxruntime.dll" "$S/webgpu/onnxruntime.cpp" -- "$(base 0x183000000)" -lwebgpu_dawn
    build_pe "$B/ort/ort_webgpu_app.exe" "$S/webgpu/ort_webgpu_app.c" -- -municode -lcrashcap
    # Node.js addon
    build_pe "$B/node/onnxruntime_binding.node" "$S/node/onnxruntime_binding.cpp" -- "$(base 0x187000000)"
    build_pe "$B/node/node.exe" "$S/node/node.cpp" -- -municode -lcrashcap
    # Vulkan device probe (llamafile)
    build_pe "$B/vulkan/amdvlk64.dll" "$S/vulkan/amdvlk64.cpp" -- "$(base 0x18a000000)"
    build_pe "$B/vulkan/vulkan-1.dll" "$S/vulkan/vulkan_loader.c" -- "$(base 0x189000000)"
    build_pe "$B/vulkan/ggml-vulkan.dll" "$S/vulkan/ggml_vulkan.c" -- "$(base 0x188000000)" -lvulkan-1
    build_pe "$B/vulkan/llamafile.exe" "$S/vulkan/llamafile.c" -- -municode -lcrashcap
    # OpenCL: ICD loader, AMD ICD, an image engine releasing its context at exit
    build_pe "$B/opencl/OpenCL.dll" "$S/opencl/opencl_loader.c" -- "$(base 0x18e000000)"
    build_pe "$B/opencl/amdocl64.dll" "$S/opencl/amdocl64.c" -- "$(base 0x190000000)"
    build_pe "$B/opencl/cl_engine.dll" "$S/opencl/cl_engine.c" -- "$(base 0x191000000)" -lOpenCL
    build_pe "$B/opencl/photo_export.exe" "$S/opencl/photo_export.c" -- -municode -lcrashcap
    # GPU libraries whose handles are released at exit (DirectML, cuDNN)
    build_pe "$B/gpulibs/DirectML.dll" "$S/gpulibs/directml.cpp" -- "$(base 0x192000000)"
    build_pe "$B/gpulibs/cudnn64_9.dll" "$S/gpulibs/cudnn.c" -- "$(base 0x193000000)"
    local eng
    for pair in DML:dml_session CUDNN:conv_engine; do
        mode="${pair%%:*}"; eng="${pair##*:}"
        mkdir -p "$BUILD/obj/$eng"
        clang-14 -x c "${CFLAGS_COMMON[@]}" -std=c11 -I"$SRC/capture" -DENGINE_$mode -c "$S/gpulibs/engines.c" \
            -o "$BUILD/obj/$eng/engines.o"
        clang-14 --target=x86_64-w64-mingw32 -fuse-ld=/usr/bin/ld.lld-14 -g -shared \
            -L"$GCC_LIB" -L"$BUILD/lib" "$BUILD/obj/$eng/engines.o" -o "$B/gpulibs/$eng.dll" \
            -Wl,--pdb="$B/gpulibs/$eng.pdb" -Wl,-Xlink=-pdbaltpath:%_PDB% -Wl,-Xlink=-Brepro
        BUILT_PES+=("$B/gpulibs/$eng.dll")
    done
    build_pe "$B/gpulibs/gpu_job.exe" "$S/gpulibs/gpu_job.c" -- -municode -lcrashcap
    # Negative samples: failures next to the exit-time ones (the false-positive corpus)
    build_pe "$B/hip/hip_batch_infer.exe" "$S/negatives/hip_batch_infer.c" -- -lamdhip64_6
    build_pe "$B/vulkan/vkcube.exe" "$S/negatives/vkcube.c" -- -municode -lcrashcap -lvulkan-1
    build_pe "$B/negatives/plugin_registry.exe" "$S/negatives/startup_ctor.cpp" -- -municode -lcrashcap
    build_pe "$B/negatives/telemetry.dll" "$S/negatives/telemetry.c" -- "$(base 0x18c000000)"
    build_pe "$B/negatives/plugin_host.exe" "$S/negatives/plugin_host.c" -- -municode
    # Locks at exit: a deadlock through the loader lock, a critical section
    # whose owner ended
    build_pe "$B/locks/applog.dll" "$S/locks/applog.c" -- "$(base 0x194000000)"
    build_pe "$B/locks/logsink.dll" "$S/locks/logsink.c" -- "$(base 0x195000000)"
    build_pe "$B/locks/render_farm.exe" "$S/locks/render_farm.c" -- -municode -lapplog
    build_pe "$B/locks/gpu_queue.exe" "$S/locks/gpu_queue.c" -- -municode
    build_pe "$B/locks/codec.dll" "$S/locks/codec.c" -- "$(base 0x196000000)"
    build_pe "$B/locks/media_host.exe" "$S/locks/media_host.c" -- -municode
}

# ---------------------------------------------------------------- wine -----
fresh_prefix() {
    say "creating a fresh WINEPREFIX at $WINEPREFIX"
    wineserver -k 2>/dev/null || true
    rm -rf "$WINEPREFIX"
    wineboot -i >/dev/null 2>&1 || die "wineboot -i failed"
    # Report Windows 10 (thread descriptions exist since Windows 10 1607).
    wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >/dev/null 2>&1 || true
    wineserver -w
    mkdir -p "$DRIVE_C/dumps"
}

# install_dir WINDOWS_DIR(relative to C:) FILES...
install_into() {
    local dst="$DRIVE_C/$1"; shift
    mkdir -p "$dst"
    cp "$@" "$dst/"
}

# complete NAME: raw dump + sidecar -> NAME.dmp, raw kept in raw/
complete_dump() {
    local name="$1"
    local raw="$DRIVE_C/dumps/$name.raw" side="$DRIVE_C/dumps/$name.sidecar.txt"
    [ -s "$raw" ] || die "$name: no raw dump was written"
    [ -s "$side" ] || die "$name: no sidecar was written"
    cp "$raw" "$RAW_DIR/$name.wine.mdmp.raw"
    cp "$side" "$RAW_DIR/$name.sidecar.txt"
    python3 "$SRC/tools/complete_dump.py" "$raw" "$side" "$HERE/$name.dmp"
}

# run_hang NAME AFTER_MS WINDOWS_EXE [ARGS]: out-of-process capture of a live process
run_hang() {
    local name="$1" after="$2"; shift 2
    say "$name: running $1 under capture.exe (dump after ${after} ms)"
    rm -f "$DRIVE_C/dumps/$name".*
    local rc=0
    wine 'C:\dumptriage\tools\capture.exe' "$after" "C:\\dumps\\$name.raw" "C:\\dumps\\$name.sidecar.txt" "$@" || rc=$?
    [ $rc = 0 ] || die "$name: capture.exe exited with $rc"
    complete_dump "$name"
}

# run_crash NAME WINDOWS_EXE [ARGS]: the program crashes; crashcap.dll inside it writes the dump
run_crash() {
    local name="$1"; shift
    say "$name: running $1 (in-process crash capture)"
    rm -f "$DRIVE_C/dumps/$name".*
    local rc=0
    DUMPTRIAGE_DUMP="C:\\dumps\\$name.raw" DUMPTRIAGE_SIDECAR="C:\\dumps\\$name.sidecar.txt" \
        wine "$@" || rc=$?
    printf '   exit code %s\n' "$rc"
    complete_dump "$name"
}

# ---------------------------------------------------------------- scenarios
scenario_hip() {
    install_into "apps/hip" "$BUILD/bin/hip/"*.exe "$BUILD/bin/hip/amdhip64_6.dll" "$BUILD/bin/hip/torch_hip.dll"
    wants hip-unregister-fatbinary-hang && run_hang hip-unregister-fatbinary-hang 1500 'C:\apps\hip\hip_repro.exe'
    wants hip-dllmain-detach-hang && run_hang hip-dllmain-detach-hang 1500 'C:\apps\hip\hip_detach.exe'
    wants hip-fatbinary-hang-in-dll-detach && run_hang hip-fatbinary-hang-in-dll-detach 1500 'C:\apps\hip\hip_torch_app.exe'
    wants pal-fence-wait-at-exit && run_hang pal-fence-wait-at-exit 1500 'C:\apps\hip\hip_pal.exe'
    wants hang-during-work && run_hang hang-during-work 1500 'C:\apps\hip\hip_train_step.exe'
    wants healthy-multithreaded && run_hang healthy-multithreaded 1500 'C:\apps\hip\hip_service.exe'
    wants hang-at-exit-app-handler && run_hang hang-at-exit-app-handler 1500 'C:\apps\hip\hip_batch_infer.exe'
    return 0
}

wants() { case " $WANT " in *" $1 "*|*" all "*) return 0;; esac; return 1; }

scenario_winml() {
    local B="$BUILD/bin/winml" T="$BUILD/bin/tools"
    install_into "Python312" "$B/python.exe" "$B/python312.dll" "$T/crashcap.dll"
    install_into "Python312/DLLs" "$B/_ctypes.pyd"
    install_into "Python312/Lib/site-packages/windowsml" "$B/Microsoft.Windows.AI.MachineLearning.dll"
    wants winml-epcatalog-release && run_crash winml-epcatalog-release 'C:\Python312\python.exe' -m winml build
    return 0
}

scenario_ort() {
    local B="$BUILD/bin/ort" T="$BUILD/bin/tools"
    install_into "apps/ort" "$B/ort_webgpu_app.exe" "$B/onnxruntime.dll" "$B/webgpu_dawn.dll" \
        "$B/dxcompiler.dll" "$B/dxil.dll" "$T/crashcap.dll"
    wants dxc-after-unload && run_crash dxc-after-unload 'C:\apps\ort\ort_webgpu_app.exe' --scenario dxc
    wants dxc-detached-at-exit && run_crash dxc-detached-at-exit 'C:\apps\ort\ort_webgpu_app.exe' --scenario dxc-exit
    wants ort-logger-after-teardown && run_crash ort-logger-after-teardown 'C:\apps\ort\ort_webgpu_app.exe' --scenario logger
    wants crash-during-work && run_crash crash-during-work 'C:\apps\ort\ort_webgpu_app.exe' --scenario work-crash
    return 0
}

scenario_node() {
    local B="$BUILD/bin/node" O="$BUILD/bin/ort" T="$BUILD/bin/tools"
    local addon_dir="apps/node/node_modules/onnxruntime-node/bin/napi-v6/win32/x64"
    install_into "apps/node" "$B/node.exe" "$T/crashcap.dll"
    install_into "$addon_dir" "$B/onnxruntime_binding.node" "$O/onnxruntime.dll" "$O/webgpu_dawn.dll" \
        "$O/dxcompiler.dll" "$O/dxil.dll"
    wants ort-node-env-late-release && run_crash ort-node-env-late-release 'C:\apps\node\node.exe' 'C:\apps\node\app.js'
    # The binding before the fix: its Ort::Env is a function-local static.
    wants ort-node-env-released-at-detach && ORT_NODE_STANDIN_ENV=function-static \
        run_crash ort-node-env-released-at-detach 'C:\apps\node\node.exe' 'C:\apps\node\app.js'
    return 0
}

scenario_vulkan() {
    local B="$BUILD/bin/vulkan" T="$BUILD/bin/tools"
    install_into "apps/llamafile" "$B/llamafile.exe" "$B/ggml-vulkan.dll" "$B/vulkan-1.dll" \
        "$B/amdvlk64.dll" "$T/crashcap.dll"
    # Wine ships a builtin vulkan-1.dll: make it load the stand-in loader from the app folder.
    wants vulkan-probe-driver-exception && WINEDLLOVERRIDES="$WINEDLLOVERRIDES;vulkan-1=n" \
        run_crash vulkan-probe-driver-exception 'C:\apps\llamafile\llamafile.exe' --gpu auto -m model.gguf
    wants vulkan-device-destroyed-at-exit && DT_GPU_PRESENT=1 WINEDLLOVERRIDES="$WINEDLLOVERRIDES;vulkan-1=n" \
        run_crash vulkan-device-destroyed-at-exit 'C:\apps\llamafile\llamafile.exe' --gpu vulkan -m model.gguf
    return 0
}

scenario_opencl() {
    local B="$BUILD/bin/opencl" T="$BUILD/bin/tools"
    install_into "apps/photo" "$B/photo_export.exe" "$B/cl_engine.dll" "$B/OpenCL.dll" \
        "$B/amdocl64.dll" "$T/crashcap.dll"
    wants opencl-context-released-at-exit && WINEDLLOVERRIDES="$WINEDLLOVERRIDES;opencl=n" \
        run_crash opencl-context-released-at-exit 'C:\apps\photo\photo_export.exe'
    return 0
}

scenario_gpulibs() {
    local B="$BUILD/bin/gpulibs" T="$BUILD/bin/tools"
    install_into "apps/gpujob" "$B/gpu_job.exe" "$B/dml_session.dll" "$B/conv_engine.dll" \
        "$B/DirectML.dll" "$B/cudnn64_9.dll" "$T/crashcap.dll"
    wants directml-device-released-at-exit && \
        run_crash directml-device-released-at-exit 'C:\apps\gpujob\gpu_job.exe' dml_session.dll
    wants cudnn-handle-destroyed-at-exit && \
        run_crash cudnn-handle-destroyed-at-exit 'C:\apps\gpujob\gpu_job.exe' conv_engine.dll
    return 0
}

scenario_negatives() {
    local B="$BUILD/bin" T="$BUILD/bin/tools"
    install_into "apps/vkcube" "$B/vulkan/vkcube.exe" "$B/vulkan/vulkan-1.dll" "$B/vulkan/amdvlk64.dll" "$T/crashcap.dll"
    wants vulkan-render-crash && DT_GPU_PRESENT=1 WINEDLLOVERRIDES="$WINEDLLOVERRIDES;vulkan-1=n" \
        run_crash vulkan-render-crash 'C:\apps\vkcube\vkcube.exe'
    install_into "apps/plugins" "$B/negatives/plugin_registry.exe" "$B/negatives/plugin_host.exe" \
        "$B/negatives/telemetry.dll" "$T/crashcap.dll"
    wants startup-ctor-crash && run_crash startup-ctor-crash 'C:\apps\plugins\plugin_registry.exe'
    wants loader-lock-at-startup && run_hang loader-lock-at-startup 1500 'C:\apps\plugins\plugin_host.exe'
    return 0
}

scenario_locks() {
    install_into "apps/locks" "$BUILD/bin/locks/"*.exe "$BUILD/bin/locks/"*.dll
    wants loader-lock-deadlock-at-exit && \
        run_hang loader-lock-deadlock-at-exit 1500 'C:\apps\locks\render_farm.exe'
    wants critical-section-owner-gone-at-exit && \
        run_hang critical-section-owner-gone-at-exit 1500 'C:\apps\locks\gpu_queue.exe'
    wants dllmain-waits-for-thread-at-exit && \
        run_hang dllmain-waits-for-thread-at-exit 1500 'C:\apps\locks\media_host.exe'
    return 0
}

# ---------------------------------------------------------------- symbols --
write_symbols() {
    say "writing Breakpad symbols into $SYM_DIR"
    rm -rf "$SYM_DIR"; mkdir -p "$SYM_DIR"
    local pe sym module_line debug_id debug_file
    for pe in "${BUILT_PES[@]}"; do
        sym="$(mktemp)"
        dump_syms "$pe" >"$sym" 2>/dev/null || die "dump_syms failed on $pe"
        module_line="$(head -1 "$sym")"
        debug_id="$(awk '{print $4}' <<<"$module_line")"
        debug_file="$(awk '{print $5}' <<<"$module_line")"
        mkdir -p "$SYM_DIR/$debug_file/$debug_id"
        mv "$sym" "$SYM_DIR/$debug_file/$debug_id/${debug_file%.pdb}.sym"
        chmod 644 "$SYM_DIR/$debug_file/$debug_id/${debug_file%.pdb}.sym"
    done
}

# ---------------------------------------------------------------- main -----
main() {
    WANT="${*:-all}"
    # The PDBs record the compiler's working directory (and the object
    # paths): build from here, so the same sources give the same ids.
    cd "$HERE"
    ensure_toolchain
    mkdir -p "$RAW_DIR"
    build_all
    fresh_prefix
    install_into "dumptriage/tools" "$BUILD/bin/tools/crashcap.dll" "$BUILD/bin/tools/capture.exe"
    scenario_hip
    scenario_winml
    scenario_ort
    scenario_node
    scenario_vulkan
    scenario_opencl
    scenario_gpulibs
    scenario_negatives
    scenario_locks
    write_symbols
    say "writing the Microsoft-style store of binaries and PDBs (poor twins) into $HERE/store"
    python3 "$SRC/tools/make_store.py" "$HERE/store" "$BUILD/bin" \
        /usr/lib/x86_64-linux-gnu/wine/x86_64-windows "$RAW_DIR"/*.wine.mdmp.raw
    wineserver -k 2>/dev/null || true
    say "verifying"
    if [ "$WANT" = all ]; then
        python3 "$SRC/tools/verify_samples.py" "$HERE" || die "verification failed"
    else
        # expected.toml keeps the thread ids of the previous full run: rerun in full
        # before committing recaptured dumps.
        python3 "$SRC/tools/verify_samples.py" "$HERE" --no-write || true
        say "partial run: expected.toml was not rewritten (run without arguments to refresh it)"
    fi
    say "done"
}

main "$@"
