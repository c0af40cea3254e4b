#!/usr/bin/env bash
# Writes syslibs/: the system libraries of the Linux sample dumps as a user
# has them installed, without debug files (their export tables and unwind
# tables only), as a Breakpad store, so tests/linux_twins.rs checks that
# form ("own_and_libs" in twins.toml) on any machine, whatever its libc.
#
# Needs a machine with exactly the builds the dumps recorded (Debian 12's
# libc6 2.36-9+deb12u14, libstdc++6 12.2.0-14+deb12u1, python3.11
# 3.11.2-6+deb12u6): each
# library's build id is checked against the dumps' module lists (the ids of
# symbols/, which capture.sh wrote from the same libraries), and the script
# stops on any other. Uses dump_syms (crates.io), as capture.sh does, on the
# installed file only: no debug file is read (dump_syms reads none it is
# not given), so only the ELF's symbol tables and .eh_frame go in.
#
#   bash sample-dumps/linux/syslibs.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v dump_syms >/dev/null || cargo install --locked dump_syms

out=$here/syslibs
rm -rf "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for lib in /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 \
  /lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libgcc_s.so.1 /usr/bin/python3.11; do
  real=$(readlink -f "$lib")
  dump_syms "$real" >"$tmp/module.sym" 2>/dev/null
  read -r _ _ _ id name <"$tmp/module.sym"
  # The dumps name the module by the path they loaded (libc.so.6, not
  # libc-2.36.so): file it under that name, as the dumps ask for it.
  want=$(basename "$lib")
  if [ ! -d "$here/symbols/$want/$id" ]; then
    echo "syslibs.sh: $real has id $id, which no Linux sample recorded" \
      "(see $here/symbols/$want/): this machine's build is not the dumps'" >&2
    exit 1
  fi
  if [ "$name" != "$want" ]; then
    sed -i "1s/ $name\$/ $want/" "$tmp/module.sym"
  fi
  mkdir -p "$out/$want/$id"
  mv "$tmp/module.sym" "$out/$want/$id/$want.sym"
done
du -sh "$out" >&2
