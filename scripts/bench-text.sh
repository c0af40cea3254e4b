#!/usr/bin/env bash
# Benchmark: `dumptriage analyze` of a 50 MB CI log holding one stack trace
# (a GitHub Actions build log: timestamps on every line, a gdb trace at the
# end), against what a person would otherwise run over it: `grep` for the
# trace's frame lines, and `wc -l` (reading the file once). Measured in one
# run with hyperfine (median) and printed as ratios.
#
# Usage: scripts/bench-text.sh [MB]   (work files in target/bench-text)
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-50}
WORK=target/bench-text
RUNS=${RUNS:-10}
say() { printf '== %s\n' "$*" >&2; }

command -v hyperfine >/dev/null || {
  say "installing hyperfine with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null
}
cargo build --release --locked
DT=$PWD/target/release/dumptriage
mkdir -p "$WORK"
LOG=$WORK/ci-$MB.log
if [ ! -f "$LOG" ]; then
  say "writing a $MB MB log"
  python3 - "$LOG" "$MB" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    n = 0
    i = 0
    while n < mb << 20:
        line = f"2024-05-01T12:00:{i % 60:02d}.1234567Z    Compiling crate_{i} v0.1.{i % 97} (/home/runner/work/app/crates/crate_{i}) --opt-level=3\n"
        f.write(line)
        n += len(line)
        i += 1
    f.write("""2024-05-01T12:09:00.0000000Z Thread 1 (Thread 0x7f0e1c5e8740 (LWP 4242) "python3"):
2024-05-01T12:09:00.0000000Z #0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57
2024-05-01T12:09:00.0000000Z #1  0x00007f0e1a8c2f11 in amd::Monitor::wait() () from /opt/rocm/lib/libamdhip64.so.6
2024-05-01T12:09:00.0000000Z #2  0x00007f0e1a8a1d33 in __hipUnregisterFatBinary () from /opt/rocm/lib/libamdhip64.so.6
2024-05-01T12:09:00.0000000Z #3  0x00007f0e1c23e495 in __run_exit_handlers (status=0) at ./stdlib/exit.c:113
2024-05-01T12:09:00.0000000Z #4  0x00007f0e1c23e610 in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:143
""")
PY
fi
say "the answer: $("$DT" analyze --brief "$LOG" | grep '^Diagnosis')"
hyperfine -N -w 2 -r "$RUNS" --export-json "$WORK/result.json" \
  "$DT analyze --format json -o /dev/null $LOG" \
  "grep -c -E '^[^ ]* #[0-9]+ ' $LOG" \
  "wc -l $LOG" >&2
python3 - "$WORK/result.json" "$MB" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
dt, grep, wc = (x["median"] for x in r)
print(f"{sys.argv[2]} MB log: dumptriage {dt*1000:.0f} ms (median), grep {grep*1000:.0f} ms, "
      f"wc -l {wc*1000:.0f} ms: {dt/grep:.2f}x grep, {dt/wc:.2f}x wc -l")
PY
