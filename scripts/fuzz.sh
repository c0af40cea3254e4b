#!/usr/bin/env bash
# Bounded fuzzing: runs each target of fuzz/ for SECONDS (default 60).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Targets: analyze_dump (minidump analysis: parse, walk, exit phase,
# matching), read_core (Linux core files, plain or compressed), read_python
# (CPython state in memory), load_rule (rule files), read_sym (Breakpad .sym, used on a real
# dump), read_elf, read_pe, read_pdb (the native readers). Each starts from
# its seeds (fuzz/regressions/TARGET/ and the repository's own files of that
# kind) in fuzz/corpus/TARGET/ (not committed). A crash is copied to
# fuzz/regressions/TARGET/ (where tests/fuzz_regressions.rs replays it on
# every `cargo test`) and the script exits 1.
#
# Needs a nightly toolchain and cargo-fuzz (`rustup toolchain install
# nightly`, `cargo install cargo-fuzz`). Without them it says so and exits
# 0 when FUZZ_OPTIONAL=1 (what .ci/run sets), 2 otherwise.
# Reads the public dumps (seeds of analyze_dump) from ../shared beside the
# checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(analyze_dump read_core read_python load_rule read_sym read_elf read_pe read_pdb)

missing() {
  echo "fuzz: skipped: $1" >&2
  # FUZZ_SKIP_LOG: a file .ci/run reads to say, at the end, what it skipped.
  if [ -n "${FUZZ_SKIP_LOG:-}" ]; then echo "fuzz (scripts/fuzz.sh): $1" >>"$FUZZ_SKIP_LOG"; fi
  if [ "${FUZZ_OPTIONAL:-0}" = 1 ]; then exit 0; else exit 2; fi
}
rustup toolchain list 2>/dev/null | grep -q '^nightly' \
  || missing "no nightly toolchain (rustup toolchain install nightly)"
cargo +nightly fuzz --version >/dev/null 2>&1 \
  || missing "cargo-fuzz is not installed (cargo install cargo-fuzz)"

seed() {
  local target=$1 corpus=fuzz/corpus/$1
  mkdir -p "$corpus"
  cp -n fuzz/regressions/"$target"/* "$corpus"/ 2>/dev/null || true
  case $target in
    analyze_dump)
      [ -d ../shared/corpus/public ] || { echo "fuzz: ../shared/corpus/public is missing (the public dumps live beside the checkout)" >&2; exit 1; }
      find ../shared/corpus/public -name '*.dmp' -size -64k -exec cp -n {} "$corpus"/ \; ;;
    load_rule) cp -n signatures/*.toml "$corpus"/ ;;
    read_elf) cp -n tests/data/native/libfakeexit.so* "$corpus"/ ;;
    read_pe) cp -n tests/data/native/fakehip.dll "$corpus"/ ;;
    read_pdb) cp -n tests/data/native/fakehip.pdb "$corpus"/ ;;
  esac
}

# FUZZ_TARGET_DIR: where the fuzz build goes (.ci/run keeps it outside the
# clone, so only the first run on a machine builds everything).
target_dir=${FUZZ_TARGET_DIR:-fuzz/target}

status=0
for target in "${targets[@]}"; do
  seed "$target"
  artifacts=fuzz/artifacts/$target
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  echo "fuzz: $target for ${seconds} s" >&2
  # -max_len: the seeds include whole dumps, PDBs and rule files.
  if ! cargo +nightly fuzz run --fuzz-dir fuzz --target-dir "$target_dir" \
      "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=4096 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 2>"fuzz/$target.log"; then
    status=1
    tail -40 "fuzz/$target.log" >&2
    for crash in "$artifacts"/*; do
      [ -f "$crash" ] || continue
      cp "$crash" fuzz/regressions/"$target"/
      echo "fuzz: $target: kept $(basename "$crash") in fuzz/regressions/$target/" >&2
    done
  else
    grep -E '^stat::number_of_executed_units' "fuzz/$target.log" | sed "s/^/fuzz: $target: /" >&2 || true
  fi
done
exit $status
