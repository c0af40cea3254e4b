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
# Wall times of a few milliseconds drift by a third from one second to the
# next on a shared machine, and hyperfine runs each command's runs in a
# block: so the commands are measured in ROUNDS rounds of RUNS runs each
# (hyperfine, median per command and round), each ratio is taken within a
# round, and the median ratio over the rounds is printed with its range.
# The BASE build is made once into target/bench/base-BASE (reused).
#
# Usage: scripts/bench-small.sh    (ROUNDS=7 RUNS=40 BASE=86ed521 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=target/bench
RUNS=${RUNS:-40}
ROUNDS=${ROUNDS:-7}
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

for round in $(seq "$ROUNDS"); do
  hyperfine -N --warmup 5 --runs "$RUNS" --style none --export-json "$WORK/small-$round.json" \
    --prepare "rm -f $ATTACH/*.dmp" \
    -n "dt-linux" "$DT analyze $LINUX_DUMP" \
    -n "msw-linux" "minidump-stackwalk $LINUX_DUMP" \
    -n "base-linux" "$BASE_DT analyze $LINUX_DUMP" \
    -n "dt-windows" "$DT analyze $WINDOWS_DUMP" \
    -n "msw-windows" "minidump-stackwalk $WINDOWS_DUMP" \
    -n "base-windows" "$BASE_DT analyze $WINDOWS_DUMP" \
    -n "dt-rules" "$DT signatures list" \
    -n "base-rules" "$BASE_DT signatures list" \
    -n "dt-attach" "$DT attach $TARGET --dump-dir $ATTACH -o /dev/null" \
    -n "base-attach" "$BASE_DT attach $TARGET --dump-dir $ATTACH -o /dev/null" \
    >/dev/null
done

python3 - "$WORK" "$ROUNDS" "$BASE" <<'EOF'
import json, statistics, sys
work, rounds, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = []
for r in range(1, rounds + 1):
    results = json.load(open(f"{work}/small-{r}.json"))["results"]
    runs.append({x["command"]: x["median"] * 1000 for x in results})
def ms(name):
    return statistics.median(r[name] for r in runs)
def ratio(a, b):
    values = sorted(r[a] / r[b] for r in runs)
    return f"{statistics.median(values):.2f}x ({values[0]:.2f}-{values[-1]:.2f})"
print(f"{rounds} rounds; medians in ms; ratios are dumptriage / the other, median (range) over the rounds")
for case in ["linux", "windows"]:
    print(f"small {case} dump: dumptriage {ms(f'dt-{case}'):.1f}  minidump-stackwalk {ms(f'msw-{case}'):.1f}"
          f" = {ratio(f'dt-{case}', f'msw-{case}')}  {base} {ms(f'base-{case}'):.1f} = {ratio(f'dt-{case}', f'base-{case}')}")
print(f"signatures list:   dumptriage {ms('dt-rules'):.1f}  {base} {ms('base-rules'):.1f} = {ratio('dt-rules', 'base-rules')}")
print(f"attach cycle:      dumptriage {ms('dt-attach'):.1f}  {base} {ms('base-attach'):.1f} = {ratio('dt-attach', 'base-attach')}")
EOF
