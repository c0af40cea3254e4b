#!/usr/bin/env bash
# Benchmark: `dumptriage analyze` of a folder of dumps against
# `minidump-stackwalk --json` run once per dump, with the same symbols.
#
# The batch is realistic: N real minidumps (default 50) of live clang-14
# processes (Debian's package), each blocked reading its standard input,
# captured with `dumptriage attach`. Their big modules are libLLVM-14.so.1
# (110 MB) and libclang-cpp.so.14, whose Breakpad symbol files made by
# dump_syms are about 40 MB and 20 MB: every dump needs the same large symbol
# files, as a CI run's dumps all need onnxruntime.dll's or torch_cuda.dll's.
#
# Measured in one run, with hyperfine (wall time) and GNU time (peak memory):
#   batch:  dumptriage analyze DIR          vs  minidump-stackwalk per dump, in a loop
#   single: dumptriage analyze ONE.dmp      vs  minidump-stackwalk ONE.dmp
# and printed as ratios. dumptriage also names the system libraries' frames
# from this machine's binaries (it does that by default for Linux dumps);
# minidump-stackwalk does not, so dumptriage does a little more work.
#
# Usage: scripts/bench-batch.sh [N]   (work files in target/bench; reused)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50}
WORK=target/bench
RUNS=${RUNS:-5}

# Tools (hyperfine, GNU time, clang-14, minidump-stackwalk of our
# minidump-processor's version, dump_syms) and the release build: $DT, say.
. scripts/bench-tools.sh

# --- the dumps ----------------------------------------------------------------
mkdir -p "$WORK"
DUMPS=$WORK/dumps
have=0
[ -d "$DUMPS" ] && have=$(find "$DUMPS" -name '*.dmp' | wc -l)
if [ "$have" -lt "$N" ]; then
  say "capturing $N dumps of live clang-14 processes"
  rm -rf "$DUMPS" && mkdir -p "$DUMPS"
  for _ in 1 2 3 4 5; do
    # clang reads the program from stdin, which never ends: it blocks in read().
    (sleep 100000 | clang-14 -fsyntax-only -x c - >/dev/null 2>&1) &
  done
  sleep 2
  targets=$(pgrep -x clang-14 | head -n 5)
  # The libraries as the processes mapped them, for the symbol files below.
  first=$(echo "$targets" | head -n 1)
  grep -oE '/[^ ]*(libLLVM-14\.so\.1|libclang-cpp\.so\.14)$' "/proc/$first/maps" | sort -u > "$WORK/libraries"
  i=0
  while [ "$i" -lt "$N" ]; do
    for pid in $targets; do
      [ "$i" -lt "$N" ] || break
      "$DT" attach "$pid" --dump-dir "$DUMPS" --format json -o /dev/null
      i=$((i + 1))
    done
  done
  pkill -x clang-14 || true
  pkill -f 'sleep 100000' || true
fi

# --- the large symbol files ---------------------------------------------------
SYMS=$WORK/symbols
if [ ! -d "$SYMS" ]; then
  while read -r lib; do
    say "dump_syms $(basename "$lib")"
    dump_syms "$lib" > "$WORK/module.sym"
    read -r _ _ _ id name < "$WORK/module.sym"
    mkdir -p "$SYMS/$name/$id"
    mv "$WORK/module.sym" "$SYMS/$name/$id/$name.sym"
  done < "$WORK/libraries"
fi
say "symbol files: $(find "$SYMS" -name '*.sym' -exec du -h {} + | awk '{print $1}' | paste -sd' ')"

ls "$DUMPS"/*.dmp | head -n "$N" > "$WORK/list"
count=$(wc -l < "$WORK/list")
one=$(head -n 1 "$WORK/list")
[ "$count" -ge "$N" ] || { echo "only $count dumps were captured" >&2; exit 1; }
BATCH=$WORK/batch
rm -rf "$BATCH" && mkdir -p "$BATCH"
while read -r f; do ln -s "$PWD/$f" "$BATCH/"; done < "$WORK/list"

# --- measurements -------------------------------------------------------------
cat > "$WORK/loop.sh" <<EOF
#!/bin/sh
for f in $BATCH/*.dmp; do minidump-stackwalk --json --symbols-path $SYMS "\$f" > /dev/null 2>&1; done
EOF
chmod +x "$WORK/loop.sh"
# The symbol files are big enough to be indexed: the index is made by the
# warm-up run (in a cache of the benchmark's own) and read by the measured
# ones; the batch is also timed parsing every file whole.
CACHE=$WORK/cache
rm -rf "$CACHE"
ours_batch="$DT analyze --quiet --format json -o /dev/null --symbols $SYMS --symbols-cache $CACHE $BATCH"
ours_batch_whole="$DT analyze --quiet --format json -o /dev/null --symbols $SYMS --no-symbol-index $BATCH"
theirs_batch="$WORK/loop.sh"
ours_one="$DT analyze --format json -o /dev/null --symbols $SYMS --symbols-cache $CACHE $one"
theirs_one="minidump-stackwalk --json --symbols-path $SYMS $one"

say "wall time, $count dumps"
hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/batch.json" \
  -n dumptriage "$ours_batch" -n dumptriage-no-index "$ours_batch_whole" \
  -n minidump-stackwalk-loop "$theirs_batch" >&2
say "wall time, one dump"
hyperfine -N --warmup 1 --runs "$((RUNS * 2))" --export-json "$WORK/single.json" --output=null \
  -n dumptriage "$ours_one" -n minidump-stackwalk "$theirs_one" >&2

peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
say "peak memory"
ours_peak=$(peak $ours_batch)
theirs_peak=$(peak $theirs_one)
ours_one_peak=$(peak $ours_one)

python3 - "$WORK" "$count" "$ours_peak" "$theirs_peak" "$ours_one_peak" <<'EOF'
import json, sys
work, count, ours_peak, theirs_peak, ours_one_peak = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
def means(name):
    results = json.load(open(f"{work}/{name}.json"))["results"]
    return {r["command"]: r["median"] for r in results}
b, s = means("batch"), means("single")
print(f"batch of {count} dumps: dumptriage {b['dumptriage']:.2f} s, "
      f"minidump-stackwalk per dump {b['minidump-stackwalk-loop']:.2f} s: "
      f"{b['minidump-stackwalk-loop'] / b['dumptriage']:.1f}x faster "
      f"(parsing every file whole, no index: {b['dumptriage-no-index']:.2f} s, "
      f"{b['minidump-stackwalk-loop'] / b['dumptriage-no-index']:.1f}x)")
print(f"one dump: dumptriage {s['dumptriage']:.3f} s, minidump-stackwalk {s['minidump-stackwalk']:.3f} s: "
      f"ratio {s['dumptriage'] / s['minidump-stackwalk']:.2f}")
print(f"peak memory: dumptriage on the batch {ours_peak / 1024:.0f} MiB (one dump {ours_one_peak / 1024:.0f} MiB), "
      f"one minidump-stackwalk process {theirs_peak / 1024:.0f} MiB: ratio {ours_peak / theirs_peak:.2f}")
EOF
