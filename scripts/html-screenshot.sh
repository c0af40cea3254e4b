#!/usr/bin/env bash
# Regenerates docs/html-report.png, the screenshot docs/ci.md shows of
# `--format html`: five Linux samples with a small baseline, the first dump
# (a lock-order deadlock at exit) opened, taken by Debian's headless
# chromium (`apt-get install chromium`). Run from anywhere; DUMPTRIAGE
# names the binary (default: a debug build, made when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
dt=${DUMPTRIAGE:-target/debug/dumptriage}
[ -x "$dt" ] || cargo build --locked --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/baseline.toml" <<'TOML'
crash_signature_version = 2

[[failure]]
signature = "[mutex wait] | flush_all"
issue = "https://github.com/example/app/issues/41"
note = "exit handler and worker take the two locks in opposite orders"

[[failure]]
signature = "[condition wait] | SyncAllStreams | __hipUnregisterFatBinary"
issue = "https://github.com/example/app/issues/12"
note = "ROCm runtime hang at exit, fixed upstream"
TOML
linux=sample-dumps/linux
"$dt" analyze --format html -o "$work/report.html" --baseline "$work/baseline.toml" \
  "$linux/lock-order-deadlock-at-exit-linux.dmp" \
  "$linux/hip-unregister-fatbinary-hang-linux.dmp" \
  "$linux/abort-during-exit-linux.dmp" \
  "$linux/mutex-held-by-worker-at-exit-linux.dmp" \
  "$linux/tls-destructor-crash-at-exit-linux.dmp" || [ $? = 1 ]
# The first dump opened, as after a click on it (a `#d0` link would open it
# too, but the browser then scrolls to it and headless chromium paints the
# scrolled-away part blank).
sed -i '0,/id="d0"><details>/s//id="d0"><details open>/' "$work/report.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --hide-scrollbars --window-size=1200,1900 \
  --screenshot="$PWD/docs/html-report.png" "file://$work/report.html" 2>/dev/null
echo "wrote docs/html-report.png" >&2
