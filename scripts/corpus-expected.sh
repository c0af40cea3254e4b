#!/usr/bin/env bash
# Regenerates tests/data/corpus/expected/*.json: what minidump-stackwalk
# (crates.io, the reference stack walker) reports for every public corpus
# dump (other projects' dumps, in ../shared/corpus/public beside the checkout), reduced to what tests/corpus.rs compares: each thread's id and name,
# and each frame's module and function. Run it after updating the corpus or
# the rust-minidump crates; it installs minidump-stackwalk if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(cargo metadata --format-version 1 --locked 2>/dev/null |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="minidump-processor"))')
if ! minidump-stackwalk --version 2>/dev/null | grep -q "$version"; then
  cargo install minidump-stackwalk --version "$version" --locked
fi
public=../shared/corpus/public
[ -d "$public" ] || { echo "corpus-expected.sh: $public is missing (the public dumps live beside the checkout)" >&2; exit 1; }
out=tests/data/corpus/expected
mkdir -p "$out"
for dump in "$public"/*/*.dmp; do
  name=$(basename "$dump" .dmp)
  symbols=$(dirname "$dump")/symbols
  if json=$(minidump-stackwalk --json --symbols-path "$symbols" "$dump" 2>/dev/null); then
    printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
crashing = (d.get("crash_info") or {}).get("crashing_thread")
threads = [{
    "id": t.get("thread_id"),
    "name": t.get("thread_name"),
    "crashing": i == crashing and d["crash_info"].get("type") is not None,
    "frames": [[f.get("module"), f.get("function")] for f in t["frames"]],
} for i, t in enumerate(d["threads"])]
json.dump({"status": "ok", "threads": threads}, sys.stdout, indent=1)
print()' > "$out/$name.json"
  else
    echo '{"status": "error"}' > "$out/$name.json"
  fi
done
echo "wrote $(ls "$out" | wc -l) files to $out"

# The external corpus (../shared/corpus/external, 35 dumps of ten other
# projects): the same reduction, into expected/external/, the dump's path
# with `/` as `__`. Symbols: the Breakpad store its project ships beside
# it (`symbols-breakpad/`, else `symbols/`), when there is one.
external=../shared/corpus/external
mkdir -p "$out/external"
find "$external" \( -name '*.dmp' -o -name '*.mdmp' \) | sort | while read -r dump; do
  rel=${dump#"$external"/}
  name=$(printf '%s' "${rel%.*}" | sed 's|/|__|g')
  project=$external/${rel%%/*}
  args=()
  for store in "$project/symbols-breakpad" "$project/symbols"; do
    if [ -d "$store" ]; then args=(--symbols-path "$store"); break; fi
  done
  if json=$(minidump-stackwalk --json "${args[@]}" "$dump" 2>/dev/null); then
    printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
threads = [{
    "id": t.get("thread_id"),
    "frames": [[f.get("module"), f.get("function")] for f in t["frames"]],
} for t in d["threads"]]
json.dump({"status": "ok", "threads": threads}, sys.stdout, indent=1)
print()' > "$out/external/$name.json"
  else
    echo '{"status": "error"}' > "$out/external/$name.json"
  fi
done
echo "wrote $(ls "$out/external" | wc -l) files to $out/external"
