#!/usr/bin/env bash
# Benchmark: the small everyday case, where fixed per-process costs dominate.
#
#   small dump:   dumptriage analyze ONE.dmp  vs  minidump-stackwalk ONE.dmp
#                 (a 38 kB Linux crash dump of Breakpad's test suite, and a
#                 Windows one, no symbols; dumptriage with its default
#                 look-ups of this machine's files), and vs the build of an earlier
#                 commit (BASE, default 86ed521) on the same dumps
#   rules:        dumptriage signatures list (start-up and rule loading only)
#   attach cycle: dumptriage attach PID (stop a live process, dump it, let it
#                 go, analyse the dump) vs the BASE build
#
# All in one run of hyperfine (wall time, median of RUNS), printed as ratios.
# The BASE build is made once into target/bench/base-BASE (reused).
#
# Usage: scripts/bench-small.sh    (RUNS=100 BASE=86ed521 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=target/bench
RUNS=${RUNS:-100}
BASE=${BASE:-86ed521}
SHARED=${SHARED:-../shared}
LINUX_DUMP=$SHARED/corpus/public/breakpad/linux_null_dereference.dmp
WINDOWS_DUMP=$SHARED/corpus/public/breakpad/null_read_av.dmp

. scripts/bench-tools.sh
for dump in "$LINUX_DUMP" "$WINDOWS_DUMP"; do
  [ -f "$dump" ] || { echo "missing $dump (the shared corpus beside the repository)" >&2; exit 1; }
done

# --- the earlier build --------------------------------------------------------
mkdir -p "$WORK"
BASE_DIR=$WORK/base-$BASE
BASE_DT=$BASE_DIR/target/release/dumptriage
if [ ! -x "$BASE_DT" ]; then
  say "building $BASE for comparison (once)"
  rm -rf "$BASE_DIR/src" && mkdir -p "$BASE_DIR/src"
  git archive "$BASE" | tar -x -C "$BASE_DIR/src"
  (cd "$BASE_DIR/src" && CARGO_TARGET_DIR="$PWD/../target" cargo build --release --locked)
fi

# --- a live process to attach to ---------------------------------------------
ATTACH=$WORK/attach
rm -rf "$ATTACH" && mkdir -p "$ATTACH"
sleep 100000 &
TARGET=$!
trap 'kill $TARGET 2>/dev/null || true' EXIT
sleep 0.2

json=$WORK/small.json
hyperfine -N --warmup 5 --runs "$RUNS" --style basic --export-json "$json" \
  --prepare "rm -f $ATTACH/*.dmp" \
  -n "dt-linux" "$DT analyze $LINUX_DUMP" \
  -n "base-linux" "$BASE_DT analyze $LINUX_DUMP" \
  -n "msw-linux" "minidump-stackwalk $LINUX_DUMP" \
  -n "dt-windows" "$DT analyze $WINDOWS_DUMP" \
  -n "base-windows" "$BASE_DT analyze $WINDOWS_DUMP" \
  -n "msw-windows" "minidump-stackwalk $WINDOWS_DUMP" \
  -n "dt-rules" "$DT signatures list" \
  -n "base-rules" "$BASE_DT signatures list" \
  -n "dt-attach" "$DT attach $TARGET --dump-dir $ATTACH -o /dev/null" \
  -n "base-attach" "$BASE_DT attach $TARGET --dump-dir $ATTACH -o /dev/null" \
  >/dev/null

python3 - "$json" "$BASE" <<'EOF'
import json, sys
runs = {r["command"]: r["median"] * 1000 for r in json.load(open(sys.argv[1]))["results"]}
base = sys.argv[2]
print(f"medians of {sys.argv[1]} (ms); ratios are dumptriage / the other")
for case in ["linux", "windows"]:
    dt, b, msw = runs[f"dt-{case}"], runs[f"base-{case}"], runs[f"msw-{case}"]
    print(f"small {case} dump: dumptriage {dt:.1f}  minidump-stackwalk {msw:.1f} ({dt / msw:.2f}x)  {base} {b:.1f} ({dt / b:.2f}x)")
dt, b = runs["dt-rules"], runs["base-rules"]
print(f"signatures list:   dumptriage {dt:.1f}  {base} {b:.1f} ({dt / b:.2f}x)")
dt, b = runs["dt-attach"], runs["base-attach"]
print(f"attach cycle:      dumptriage {dt:.1f}  {base} {b:.1f} ({dt / b:.2f}x)")
EOF
