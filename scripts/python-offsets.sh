#!/usr/bin/env bash
# Writes src/python/offsets.toml: the CPython structure offsets the
# Python-stack reader (src/python/) needs, for each interpreter installed
# with pyenv (3.10 to 3.13), by compiling scripts/python/offsets.c against
# that interpreter's own headers (internal ones included).
#
# Usage: scripts/python-offsets.sh   (needs pyenv's versions and gcc)
set -euo pipefail
cd "$(dirname "$0")/.."
out=src/python/offsets.toml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "# CPython structure offsets (bytes), x86-64 and arm64 Linux (LP64),"
  echo "# written by scripts/python-offsets.sh from each version's headers."
  for dir in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[0-3].*; do
    version=$(basename "$dir")
    include=$dir/include/python${version%.*}
    gcc -o "$work/offsets" scripts/python/offsets.c -I"$include" -I"$include/internal"
    echo
    echo "# CPython $version"
    "$work/offsets"
  done
} > "$work/offsets.toml"
mv "$work/offsets.toml" "$out"
echo "wrote $out" >&2
