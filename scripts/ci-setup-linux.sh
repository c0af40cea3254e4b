#!/usr/bin/env bash
# Prepares a Linux machine for the whole test suite, so that no test has to
# skip (under CI=true a skip is a failure: tests/common/skip.rs). Run by
# .ci/run and by .github/workflows/ci.yml; as root or with passwordless
# sudo (hosted runners); installs only what is missing, with one
# `apt-get update` at most:
#   xmllint (libxml2-utils)  validates the JUnit output against its schema
#   Wine's DLLs (libwine)    names the system frames of the vendor sample
#                            (tests/vendor.rs), from
#                            /usr/lib/x86_64-linux-gnu/wine/x86_64-windows
#   npm                      fetches the vendor binaries
#                            (sample-dumps/vendor/fetch.sh, run by .ci/run)
#   gdb                      the text-trace round trips on the sample programs
#   util-linux `script`      the pseudo-terminal of the colour and progress
#                            bar tests (bsdutils)
#   groff (groff-base)       reads the generated man pages (tests/reference.rs)
#   chromium                 renders the HTML report headless (tests/html.rs,
#                            scripts/html-screenshot.sh)
#   GNU parallel             runs docs/ci.md's shard recipe (tests/merge.rs)
#   lldb                     the text-trace round trips; reads the minidumps
#                            `convert` writes
#   g++                      the fuzz build (libFuzzer is C++)
# lets a process ptrace a sibling (attach tests), which Yama's
# ptrace_scope 1 (Ubuntu's default) forbids, and fetches the real vendor
# binaries of tests/vendor.rs (sample-dumps/vendor/fetch.sh
# --binaries-only: node.exe and onnxruntime from npm, hashes checked) into
# $DT_VENDOR_DIR, by default ${XDG_CACHE_HOME:-$HOME/.cache}/dumptriage/vendor,
# outside the clone: only a machine's first run downloads them.
set -euo pipefail
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}
missing=()
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
[ -f /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/ntdll.dll ] || missing+=(libwine)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# gdb: the text-trace round trips (tests/text_traces.rs) run it on tests/programs.
command -v gdb >/dev/null 2>&1 || missing+=(gdb)
# lldb: the text-trace round trips in lldb's words (tests/text_formats.rs),
# and reads the minidumps `convert` writes (tests/artifacts.rs).
command -v lldb >/dev/null 2>&1 || missing+=(lldb)
script --version 2>/dev/null | grep -q util-linux || missing+=(bsdutils)
command -v groff >/dev/null 2>&1 || missing+=(groff-base)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v parallel >/dev/null 2>&1 || missing+=(parallel)
# g++: the fuzz build (libfuzzer-sys compiles libFuzzer, C++).
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci-setup-linux: installing ${missing[*]}" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
scope=/proc/sys/kernel/yama/ptrace_scope
if [ -r "$scope" ] && [ "$(cat "$scope")" != 0 ]; then
  as_root sysctl -q kernel.yama.ptrace_scope=0
fi
command -v gcc >/dev/null 2>&1 || { echo "gcc is needed to build tests/programs" >&2; exit 1; }
# py-spy (PyPI): tests/text_traces.rs reads its dumps of a Python hang.
command -v py-spy >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check py-spy
bash "$(dirname "$0")/../sample-dumps/vendor/fetch.sh" --binaries-only
