#!/usr/bin/env bash
# Benchmark: what keeping the Python stacks costs `dumptriage attach`: a
# CPython process with THREADS threads (default 50), each 20 Python calls
# deep (tests/programs/python_many_threads.py), dumped by `attach` with the
# interpreter state kept and without it (DUMPTRIAGE_NO_PYTHON_MEMORY=1),
# in one hyperfine run; prints the time and dump-size differences.
#
# Usage: scripts/bench-python.sh [THREADS] [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${1:-50}
PYTHON=${2:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11.*/bin/python3.11 | tail -1)}
WORK=$PWD/target/bench-python
RUNS=${RUNS:-20}
command -v hyperfine >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null
}
cargo build --release --locked
DT=$PWD/target/release/dumptriage
rm -rf "$WORK" && mkdir -p "$WORK"
"$PYTHON" tests/programs/python_many_threads.py "$THREADS" > "$WORK/ready" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
while ! grep -q "in place" "$WORK/ready" 2>/dev/null; do sleep 0.1; done
hyperfine -N -w 2 -r "$RUNS" --export-json "$WORK/result.json" \
  --command-name "attach, Python stacks kept" "$DT attach -q --dump-dir $WORK/with --format json -o /dev/null $PID" \
  --command-name "attach, without" "env DUMPTRIAGE_NO_PYTHON_MEMORY=1 $DT attach -q --dump-dir $WORK/without --format json -o /dev/null $PID" >&2
with=$(ls -S "$WORK/with"/*.dmp | head -1)
without=$(ls -S "$WORK/without"/*.dmp | head -1)
python3 - "$WORK/result.json" "$with" "$without" "$THREADS" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))["results"]
kept, bare = (x["median"] for x in r)
size = os.path.getsize(sys.argv[2]) - os.path.getsize(sys.argv[3])
print(f"{sys.argv[4]} Python threads: attach {bare*1000:.0f} ms without, {kept*1000:.0f} ms with "
      f"the Python stacks kept (+{(kept-bare)*1000:.0f} ms); the dump grows by {size/1024:.0f} KB")
PY
