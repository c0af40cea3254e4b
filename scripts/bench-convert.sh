#!/usr/bin/env bash
# Benchmark: `dumptriage convert` of the big benchmark core (the one
# scripts/bench-core.sh makes from scripts/bench/big_core.c: THREADS
# blocked threads, MB megabytes of written heap, a crash in an atexit
# handler), from the file and from a pipe (as a core_pattern handler reads
# it): the minidump's size against the core's, the time and peak memory of
# each conversion (GNU time), and the answer of both files, which must be
# the same.
#
# Usage: scripts/bench-convert.sh [THREADS] [MB]   (defaults 100 4096; work
# files, including the core, in target/bench-core; KEEP_CORE=1 keeps the
# core for the next run, else it is deleted at the end)
#        scripts/bench-convert.sh samples   (the Linux sample programs'
# cores instead: a kernel core of each crash, and of each hang on SIGABRT)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '== %s\n' "$*" >&2; }

if [ "${1:-}" = samples ]; then
  cargo build --release --locked
  DT=$PWD/target/release/dumptriage
  WORK=$PWD/target/bench-convert-samples
  rm -rf "$WORK" && mkdir -p "$WORK"
  printf '%-22s %10s %10s %8s\n' core 'core KB' 'dmp KB' percent
  for program in cuda_exit_crash tls_exit_crash unload_crash static_dtor_throw \
      hip_exit_hang tls_exit_hang dlopen_exit_hang exit_lock_hang exit_deadlock python3; do
    dir=$WORK/$program && mkdir -p "$dir"
    ln -s "$PWD"/sample-dumps/linux/bin/* "$dir"/
    {
      case $program in
        *crash*|*throw*) (cd "$dir" && ulimit -c unlimited && ./"$program" >/dev/null 2>&1) || true ;;
        *) (cd "$dir" && ulimit -c unlimited && exec ./"$program" >/dev/null 2>&1) & pid=$!
           sleep 2; kill -ABRT "$pid"; wait "$pid" || true ;;
      esac
    } 2>/dev/null
    core=$dir/core
    [ -f "$core" ] || { say "$program left no core"; exit 1; }
    "$DT" convert "$core" -o "$dir/small.dmp" 2>"$dir/said"
    grep -q 'gives the same report' "$dir/said" || { cat "$dir/said" >&2; exit 1; }
    c=$(stat -c %s "$core"); d=$(stat -c %s "$dir/small.dmp")
    printf '%-22s %10d %10d %7.2f%%\n' "$program" $((c / 1024)) $((d / 1024)) "$(awk "BEGIN { print $d * 100 / $c }")"
  done
  # A real CPython process (Debian's /usr/bin/python3) hung at exit in
  # threading._shutdown: its Python frames are read from the interpreter.
  if [ -x /usr/bin/python3 ]; then
    dir=$WORK/cpython && mkdir -p "$dir"
    {
      (cd "$dir" && ulimit -c unlimited && exec /usr/bin/python3 -c \
        'import threading, time; threading.Thread(target=time.sleep, args=(60,)).start()') & pid=$!
      sleep 2; kill -ABRT "$pid"; wait "$pid" || true
    } 2>/dev/null
    "$DT" convert "$dir/core" -o "$dir/small.dmp" 2>"$dir/said"
    grep -q 'gives the same report' "$dir/said" || { cat "$dir/said" >&2; exit 1; }
    c=$(stat -c %s "$dir/core"); d=$(stat -c %s "$dir/small.dmp")
    printf '%-22s %10d %10d %7.2f%%\n' cpython-join $((c / 1024)) $((d / 1024)) "$(awk "BEGIN { print $d * 100 / $c }")"
  fi
  rm -rf "$WORK"
  exit 0
fi

THREADS=${1:-100}
MB=${2:-4096}
WORK=$PWD/target/bench-core

[ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
case $(cat /proc/sys/kernel/core_pattern) in
  \|*|*/*) say "kernel.core_pattern ($(cat /proc/sys/kernel/core_pattern)) does not write cores into the process's folder"; exit 2 ;;
esac
need=$(( MB / 1024 + 2 ))
free=$(df -BG --output=avail "$PWD" | tail -1 | tr -dc 0-9)
if [ "$free" -lt "$need" ]; then
  say "the core needs about $need GB and $free GB are free here"; exit 2
fi
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
[ "${KEEP_CORE:-0}" = 1 ] || trap 'rm -f "$CORE"' EXIT
SMALL=$WORK/small.dmp
PIPED=$WORK/piped.dmp
rm -f "$SMALL" "$PIPED"
read -r FILE_S FILE_KB < <(/usr/bin/time -f '%e %M' -o "$WORK/time" "$DT" convert "$CORE" -o "$SMALL" 2>"$WORK/said"; cat "$WORK/time")
grep -q 'gives the same report' "$WORK/said" || { cat "$WORK/said" >&2; exit 1; }
read -r PIPE_S PIPE_KB < <(/usr/bin/time -f '%e %M' -o "$WORK/time" "$DT" convert --from-stdin -o "$PIPED" <"$CORE" 2>"$WORK/said"; cat "$WORK/time")
grep -q 'gives the same report' "$WORK/said" || { cat "$WORK/said" >&2; exit 1; }
answer() { "$DT" analyze --brief "$1" | grep '^Diagnosis' || echo 'no diagnosis'; }
A_CORE=$(answer "$CORE"); A_SMALL=$(answer "$SMALL"); A_PIPED=$(answer "$PIPED")
[ "$A_CORE" = "$A_SMALL" ] && [ "$A_CORE" = "$A_PIPED" ] || { say "answers differ: $A_CORE / $A_SMALL / $A_PIPED"; exit 1; }
python3 - "$CORE" "$SMALL" "$PIPED" "$THREADS" "$FILE_S" "$FILE_KB" "$PIPE_S" "$PIPE_KB" "$A_CORE" <<'PY'
import os, sys
core, small, piped, threads = sys.argv[1:5]
fs, fkb, ps, pkb = float(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
c, s, p = (os.path.getsize(x) for x in (core, small, piped))
print(f"{c / (1 << 30):.1f} GB core, {threads} threads ({sys.argv[9]})")
print(f"  convert CORE:         {s / 1024:.0f} KB minidump, {s * 100 / c:.4f}% of the core "
      f"(1/{c // s}), {fs:.1f} s, {fkb // 1024} MB peak")
print(f"  convert --from-stdin: {p / 1024:.0f} KB minidump, {p * 100 / c:.4f}% of the core "
      f"(1/{c // p}), {ps:.1f} s, {pkb // 1024} MB peak")
PY
