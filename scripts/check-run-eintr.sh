#!/usr/bin/env bash
# Runs `dumptriage run --hang-timeout 2` of tests/programs/eintr_waits.c
# (seven threads in epoll_wait, select, poll, nanosleep, read, pause and a
# futex wait, none retrying on EINTR) ROUNDS times, and counts the rounds
# in which the dump was written and its report shows every thread inside
# its call (issue 36: "run never loses a dump"). tests/capture_stops.rs
# does the same three times; this is the long loop.
#
# Usage: scripts/check-run-eintr.sh [path/to/dumptriage] [rounds]
# Exit status 0 when every round passed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/release/dumptriage}"
rounds="${2:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

gcc -g -O0 -fno-omit-frame-pointer -o "$work/eintr_waits" \
    "$root/tests/programs/eintr_waits.c" -lpthread

passed=0
for round in $(seq 1 "$rounds"); do
    dir="$work/round-$round"
    mkdir "$dir"
    status=0
    "$bin" run --hang-timeout 2 --format json --output "$dir/report.json" \
        --dump-dir "$dir" -- "$work/eintr_waits" 2>"$dir/stderr" || status=$?
    why=""
    dumps=$(find "$dir" -name '*.dmp' | wc -l)
    if [ "$status" != 124 ]; then
        why="exit status $status"
    elif grep -q ' returned ' "$dir/stderr"; then
        why="a call returned to the program: $(grep ' returned ' "$dir/stderr" | head -1)"
    elif [ "$dumps" != 1 ]; then
        why="$dumps dumps"
    else
        why=$(python3 - "$dir/report.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))["reports"][0]
calls = {"epoll": "epoll_wait", "select": "select", "poll": "poll",
         "nanosleep": "nanosleep", "read": "read", "pause": "pause",
         "futex": "syscall"}
threads = {t["name"]: t for t in report["threads"]}
for name, call in calls.items():
    frames = [f["function"] or "" for f in threads.get(name, {}).get("frames", [])]
    if not frames or call not in frames[0] or f"wait_in_{name}" not in frames[:3]:
        print(f"thread {name}: {frames[:3]}")
        break
EOF
)
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "round $round: dump written, every thread inside its call"
    else
        echo "round $round: FAILED: $why"
    fi
done
echo "$passed of $rounds rounds passed"
[ "$passed" = "$rounds" ]
