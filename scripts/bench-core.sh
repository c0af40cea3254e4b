#!/usr/bin/env bash
# Benchmark: `dumptriage analyze` of a Linux kernel core against gdb's
# `thread apply all bt` on the same core (what a CI step runs today), in
# one run: time (hyperfine, median) and peak memory (GNU time's maximum
# resident set size), printed as ratios. The core is written by the kernel
# from scripts/bench/big_core.c: THREADS blocked threads, MB megabytes of
# written heap, a crash in an atexit handler.
#
# Usage: scripts/bench-core.sh [THREADS] [MB]   (defaults 100 4096; work
# files, including the core, in target/bench-core)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-100}
MB=${2:-4096}
WORK=$PWD/target/bench-core
RUNS=${RUNS:-5}
say() { printf '== %s\n' "$*" >&2; }

need() {
  command -v "$1" >/dev/null && return
  say "installing $2 with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need hyperfine hyperfine
need gdb gdb
[ -x /usr/bin/time ] || need /usr/bin/time time
case $(cat /proc/sys/kernel/core_pattern) in
  \|*|*/*) say "kernel.core_pattern ($(cat /proc/sys/kernel/core_pattern)) does not write cores into the process's folder"; exit 2 ;;
esac
cargo build --release --locked
DT=$PWD/target/release/dumptriage
mkdir -p "$WORK"
PROGRAM=$WORK/big_core
CORE=$WORK/core.big_core-$THREADS-$MB
gcc -g -O0 -o "$PROGRAM" scripts/bench/big_core.c -lpthread
if [ ! -f "$CORE" ]; then
  say "writing a core of $THREADS threads and $MB MB"
  rm -f "$WORK/core"
  (cd "$WORK" && ulimit -c unlimited && "$PROGRAM" "$THREADS" "$MB") || true
  mv "$WORK/core" "$CORE"
fi
say "core: $(du -h --apparent-size "$CORE" | cut -f1), $THREADS threads"
say "the answer: $("$DT" analyze --brief "$CORE" | grep '^Diagnosis')"
GDB="gdb -q -batch -nx -ex 'thread apply all bt' $PROGRAM $CORE"
hyperfine -w 1 -r "$RUNS" --export-json "$WORK/result.json" \
  "$DT analyze --format json -o /dev/null $CORE" \
  "$GDB" >&2
rss() { /usr/bin/time -f %M "$@" >/dev/null 2>"$WORK/rss" </dev/null; tail -1 "$WORK/rss"; }
DT_RSS=$(rss "$DT" analyze --format json -o /dev/null "$CORE")
GDB_RSS=$(rss gdb -q -batch -nx -ex 'thread apply all bt' "$PROGRAM" "$CORE")
python3 - "$WORK/result.json" "$DT_RSS" "$GDB_RSS" "$THREADS" "$CORE" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))["results"]
dt, gdb = (x["median"] for x in r)
dt_rss, gdb_rss = int(sys.argv[2]), int(sys.argv[3])
size = os.path.getsize(sys.argv[5]) / (1 << 30)
print(f"{size:.1f} GB core, {sys.argv[4]} threads: dumptriage {dt*1000:.0f} ms, "
      f"{dt_rss/1024:.0f} MB peak; gdb thread apply all bt {gdb*1000:.0f} ms, "
      f"{gdb_rss/1024:.0f} MB peak: {gdb/dt:.1f}x faster, {gdb_rss/dt_rss:.1f}x less memory")
PY
