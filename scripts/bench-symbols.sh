#!/usr/bin/env bash
# Benchmark: one dump whose modules need about 1 GB of Breakpad symbols,
# analysed by dumptriage (first run: parses and indexes the files; later
# runs: read through the index) and by minidump-stackwalk --json, with the
# same symbols, measured in one run.
#
# The dump is a real one of a live clang-14 process (Debian's package),
# blocked reading its standard input, captured with `dumptriage attach`.
# Its big modules, libLLVM-14.so.1 and libclang-cpp.so.14, get their real
# symbol files from dump_syms, grown by scripts/grow-sym.py with generated
# FUNC, LINE, INLINE, PUBLIC and STACK CFI records (above the modules' real
# addresses) to SIZE_MB in all: the parse cost of a big build's symbols,
# while the dump's frames keep their real names.
#
#   wall time (hyperfine, median): minidump-stackwalk; dumptriage with an
#     empty index folder each time (first run); dumptriage with the index
#     made (later runs)
#   peak memory (GNU time): the same three
#
# Usage: scripts/bench-symbols.sh [SIZE_MB]   (default 1024; work files in
# target/bench-symbols, reused)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${1:-1024}
WORK=target/bench-symbols
RUNS=${RUNS:-3}

# Tools (hyperfine, GNU time, clang-14, minidump-stackwalk of our
# minidump-processor's version, dump_syms) and the release build: $DT, say.
. scripts/bench-tools.sh

# --- the dump -----------------------------------------------------------------
mkdir -p "$WORK"
DUMP=$WORK/clang.dmp
if [ ! -f "$DUMP" ]; then
  say "capturing a dump of a live clang-14 process"
  (sleep 100000 | clang-14 -fsyntax-only -x c - >/dev/null 2>&1) &
  sleep 2
  pid=$(pgrep -x clang-14 | head -n 1)
  grep -oE '/[^ ]*(libLLVM-14\.so\.1|libclang-cpp\.so\.14)$' "/proc/$pid/maps" | sort -u > "$WORK/libraries"
  rm -rf "$WORK/dumps"
  "$DT" attach "$pid" --dump-dir "$WORK/dumps" --format json -o /dev/null
  mv "$WORK"/dumps/*.dmp "$DUMP"
  pkill -x clang-14 || true
  pkill -f 'sleep 100000' || true
fi

# --- the symbols --------------------------------------------------------------
SYMS=$WORK/symbols-$SIZE_MB
if [ ! -d "$SYMS" ]; then
  # Shares of SIZE_MB in proportion to the real files' sizes.
  rm -rf "$WORK/real" && mkdir -p "$WORK/real"
  while read -r lib; do
    say "dump_syms $(basename "$lib")"
    dump_syms "$lib" > "$WORK/real/$(basename "$lib").sym"
  done < "$WORK/libraries"
  total=$(cat "$WORK"/real/*.sym | wc -c)
  mkdir -p "$SYMS.tmp"
  for sym in "$WORK"/real/*.sym; do
    read -r _ _ _ id name < "$sym"
    share=$(( SIZE_MB * $(wc -c < "$sym") / total ))
    say "growing $name to $share MB"
    mkdir -p "$SYMS.tmp/$name/$id"
    python3 scripts/grow-sym.py "$sym" "$SYMS.tmp/$name/$id/$name.sym" "$share"
  done
  mv "$SYMS.tmp" "$SYMS"
fi
say "symbol files: $(find "$SYMS" -name '*.sym' -exec du -m {} + | awk '{print $1 " MB"}' | paste -sd' ')"

# --- measurements -------------------------------------------------------------
CACHE=$WORK/cache
ours="$DT analyze --format json -o /dev/null --no-system-symbols --symbols $SYMS --symbols-cache $CACHE $DUMP"
theirs="minidump-stackwalk --json --symbols-path $SYMS $DUMP"
# Same answers: the frames of every thread, by both.
"$DT" analyze --format json --no-system-symbols --no-symbol-index --symbols "$SYMS" "$DUMP" > "$WORK/ours.json"
$theirs > "$WORK/theirs.json" 2>/dev/null
python3 - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
ours = json.load(open(f"{work}/ours.json"))["reports"][0]["threads"]
theirs = json.load(open(f"{work}/theirs.json"))["threads"]
def names(frames, fn):
    return [fn(f) for f in frames]
same = sum(1 for a, b in zip(ours, theirs)
           if [f.get("function") for f in a["frames"]] == [f.get("function") for f in b["frames"]])
print(f"threads with the same frame names in both: {same} of {len(theirs)}", file=sys.stderr)
EOF

say "wall time"
hyperfine -N --runs "$RUNS" --export-json "$WORK/theirs.json.bench" --output=null \
  -n minidump-stackwalk "$theirs" >&2
hyperfine -N --runs "$RUNS" --prepare "rm -rf $CACHE" --export-json "$WORK/first.json" --output=null \
  -n "dumptriage-first-run" "$ours" >&2
hyperfine -N --warmup 1 --runs "$((RUNS * 3))" --export-json "$WORK/later.json" --output=null \
  -n "dumptriage-later-runs" "$ours" >&2

peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
say "peak memory"
theirs_peak=$(peak $theirs)
rm -rf "$CACHE"
first_peak=$(peak $ours)
later_peak=$(peak $ours)
index_mb=$(du -sm "$CACHE" | cut -f1)

python3 - "$WORK" "$theirs_peak" "$first_peak" "$later_peak" "$index_mb" "$SIZE_MB" <<'EOF'
import json, sys
work = sys.argv[1]
theirs_peak, first_peak, later_peak, index_mb, size = map(int, sys.argv[2:])
def median(name):
    return json.load(open(f"{work}/{name}"))["results"][0]["median"]
t, f, l = median("theirs.json.bench"), median("first.json"), median("later.json")
print(f"{size} MB of .sym: minidump-stackwalk {t:.2f} s, {theirs_peak / 1024:.0f} MiB peak")
print(f"dumptriage first run (parse + index): {f:.2f} s = {f / t:.2f}x minidump-stackwalk's time, "
      f"{first_peak / 1024:.0f} MiB peak; index {index_mb} MB")
print(f"dumptriage later runs (index): {l:.3f} s = {t / l:.0f}x faster, "
      f"{later_peak / 1024:.0f} MiB peak = {later_peak / theirs_peak:.3f}x minidump-stackwalk's")
EOF
