#!/usr/bin/env bash
# Prepares a hosted Linux CI runner (not root, passwordless sudo) for the
# test suite: xmllint validates the JUnit output, and the attach tests need
# a process to ptrace a sibling, which Yama's ptrace_scope 1 (Ubuntu's
# default) forbids. Run by .github/workflows/ci.yml; harmless elsewhere.
set -euo pipefail
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}
if ! command -v xmllint >/dev/null 2>&1; then
  as_root apt-get update -qq
  as_root apt-get install -y -qq libxml2-utils >/dev/null
fi
scope=/proc/sys/kernel/yama/ptrace_scope
if [ -r "$scope" ] && [ "$(cat "$scope")" != 0 ]; then
  as_root sysctl -q kernel.yama.ptrace_scope=0
fi
command -v gcc >/dev/null 2>&1 || { echo "gcc is needed to build tests/programs" >&2; exit 1; }
