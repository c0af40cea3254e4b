#!/usr/bin/env bash
# Bounded fuzzing: runs each target of fuzz/ for SECONDS (default 60).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Without TARGETs, every target fuzz/Cargo.toml declares (`cargo fuzz
# list`): analyze_dump (minidump analysis: parse, walk, exit phase,
# matching), read_core (Linux core files, plain or compressed),
# read_artifact (apport .crash files, Report.wer, packs, cores read from a
# pipe by convert --from-stdin), read_python (CPython state in memory), read_text (logs and pasted
# traces), load_rule (rule files), read_sym (Breakpad .sym, used on a real
# dump), read_elf, read_pe, read_pdb (the native readers). Each starts
# from its seeds (fuzz/regressions/TARGET/ and the repository's own files
# of that kind) in fuzz/corpus/TARGET/ (not committed). A crash is copied
# to fuzz/regressions/TARGET/ (where tests/fuzz_regressions.rs replays it
# on every `cargo test`: fix it, then commit it) and the script exits 1
# once every target has run.
#
# Needs a nightly toolchain and cargo-fuzz. FUZZ_INSTALL=1 installs
# cargo-fuzz from crates.io when it is missing (`cargo install --locked
# cargo-fuzz`, into ~/.cargo/bin, where the next run finds it). Without a
# nightly toolchain (or cargo-fuzz, when not installing it) the script
# says so and exits 0 when FUZZ_OPTIONAL=1 (what .ci/run sets), 2
# otherwise. Reads the public dumps (seeds of analyze_dump) from ../shared
# beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")

missing() {
  echo "fuzz: skipped: $1" >&2
  # FUZZ_SKIP_LOG: a file .ci/run reads to say, at the end, what it skipped.
  if [ -n "${FUZZ_SKIP_LOG:-}" ]; then echo "fuzz (scripts/fuzz.sh): $1" >>"$FUZZ_SKIP_LOG"; fi
  if [ "${FUZZ_OPTIONAL:-0}" = 1 ]; then exit 0; else exit 2; fi
}
rustup toolchain list 2>/dev/null | grep -q '^nightly' \
  || missing "no nightly toolchain (rustup toolchain install nightly)"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  [ "${FUZZ_INSTALL:-0}" = 1 ] \
    || missing "cargo-fuzz is not installed (cargo install --locked cargo-fuzz)"
  echo "fuzz: installing cargo-fuzz from crates.io" >&2
  cargo install --locked --quiet cargo-fuzz
fi
all=()
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir fuzz)
  all=(all)
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no target in fuzz/" >&2; exit 1; }

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
    read_text) find ../shared/corpus/text -type f -size -64k -exec cp -n {} "$corpus"/ \; 2>/dev/null || true ;;
  esac
}

# FUZZ_TARGET_DIR: where the fuzz build goes (.ci/run keeps it outside the
# clone, so only the first run on a machine builds everything).
target_dir=${FUZZ_TARGET_DIR:-fuzz/target}

# One build of every target first (the long part, the first time), so that
# each target's SECONDS are spent fuzzing.
started=$SECONDS
echo "fuzz: building ${#targets[@]} targets" >&2
: >fuzz/build.log
built=true
if [ ${#all[@]} -gt 0 ]; then
  cargo +nightly fuzz build --fuzz-dir fuzz --target-dir "$target_dir" >fuzz/build.log 2>&1 || built=false
else
  for target in "${targets[@]}"; do
    cargo +nightly fuzz build --fuzz-dir fuzz --target-dir "$target_dir" "$target" \
      >>fuzz/build.log 2>&1 || built=false
  done
fi
$built || {
  tail -40 fuzz/build.log >&2
  echo "fuzz: the build failed (fuzz/build.log)" >&2
  exit 1
}
echo "fuzz: built in $((SECONDS - started)) s" >&2

status=0
found=()
for target in "${targets[@]}"; do
  seed "$target"
  artifacts=fuzz/artifacts/$target
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  began=$SECONDS
  verdict=""
  # -max_len: the seeds include whole dumps, PDBs and rule files. -timeout
  # only catches an input that never ends: libFuzzer's own default is 20
  # minutes.
  if ! cargo +nightly fuzz run --fuzz-dir fuzz --target-dir "$target_dir" \
      "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=4096 -timeout=300 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 2>"fuzz/$target.log"; then
    status=1
    verdict=", FAILED"
    tail -40 "fuzz/$target.log" >&2
    for crash in "$artifacts"/*; do
      [ -f "$crash" ] || continue
      mkdir -p fuzz/regressions/"$target"
      cp "$crash" fuzz/regressions/"$target"/
      found+=("fuzz/regressions/$target/$(basename "$crash")")
    done
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz/$target.log" | tail -1)
  echo "fuzz: $target: $((SECONDS - began)) s, ${runs:-?} inputs$verdict" >&2
done
for crash in "${found[@]}"; do
  echo "fuzz: kept $crash: fix what it finds, then commit it (tests/fuzz_regressions.rs replays it)" >&2
done
echo "fuzz: ${#targets[@]} targets in $((SECONDS - started)) s" >&2
exit $status
