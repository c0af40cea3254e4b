#!/usr/bin/env bash
# Benchmark: the index of big PDB and DWARF files (src/symbols/native/index.rs)
# against reading the files themselves, on two dumps, measured in one run.
#
#   DWARF: a real dump of dumptriage's own unoptimised build
#     (target/debug/dumptriage, about 170 MB with its DWARF), blocked reading
#     a symbol server that never answers, captured by `dumptriage run
#     --hang-timeout`: 60 frames, many of them inlined.
#   PDB: a DLL built from generated C++ (templates of the standard library,
#     -O2, so inline sites everywhere) with clang-14 and lld (CodeView), its
#     PDB about UNITS x 19 MB; the dump, written by scripts/pdb-bench-dump.py,
#     has 32 threads standing in it with 24 return addresses each on their
#     stacks, spread over the whole image.
#
# For each dump (hyperfine, median of RUNS; GNU time, peak memory):
#   no index       --no-symbol-index: the file read, as every run did before
#   indexing run   the second run to read the file (the first left a mark):
#                  answers from the file, and makes the index meanwhile
#   later runs     read through the index
# and a check that the three give the same answers.
#
# Usage: scripts/bench-native.sh [UNITS]   (default 4; work files in
# target/bench-native, reused)
set -euo pipefail
cd "$(dirname "$0")/.."
UNITS=${1:-4}
WORK=$PWD/target/bench-native
RUNS=${RUNS:-5}

. scripts/bench-tools.sh
need=()
[ -x /usr/bin/ld.lld-14 ] || need+=(lld-14)
[ -d /usr/lib/gcc/x86_64-w64-mingw32 ] && ls /usr/lib/gcc/x86_64-w64-mingw32/*-win32/include/c++ >/dev/null 2>&1 ||
  need+=(g++-mingw-w64-x86-64)
command -v llvm-pdbutil >/dev/null || need+=(llvm)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
mkdir -p "$WORK"

# --- the DWARF dump -------------------------------------------------------------
DW=$WORK/dwarf
if [ ! -f "$DW/hung.dmp" ]; then
  say "capturing a dump of dumptriage's own debug build, hung on a silent server"
  cargo build --locked
  mkdir -p "$DW/bin"
  cp target/debug/dumptriage "$DW/bin/dtdebug"
  python3 - "$DW/port" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(60)
EOF
  listener=$!
  while [ ! -s "$DW/port" ]; do sleep 0.1; done
  rm -rf "$DW/dumps"
  "$DT" run --hang-timeout 3 --dump-dir "$DW/dumps" --format json -o /dev/null -- \
    "$DW/bin/dtdebug" analyze --symbols "http://127.0.0.1:$(cat "$DW/port")/" \
    --symbols-cache "$DW/unused" sample-dumps/dxc-after-unload.dmp || true
  kill "$listener" 2>/dev/null || true
  mv "$DW"/dumps/*.dmp "$DW/hung.dmp"
fi

# --- the PDB dump ---------------------------------------------------------------
PD=$WORK/pdb-$UNITS
if [ ! -f "$PD/bench.dmp" ]; then
  say "building a DLL of $UNITS generated C++ units with its PDB (clang-14, lld)"
  rm -rf "$PD" && mkdir -p "$PD/obj" "$PD/symbols"
  GCC=$(ls -d /usr/lib/gcc/x86_64-w64-mingw32/*-win32 | sort -V | tail -n 1)
  CXX=(clang-14 -x c++ --target=x86_64-w64-mingw32 -g -gcodeview -O2 -std=c++17
       -isystem "$GCC/include/c++" -isystem "$GCC/include/c++/x86_64-w64-mingw32")
  python3 - "$PD/obj" "$UNITS" <<'EOF'
import sys
out, units = sys.argv[1], int(sys.argv[2])
for unit in range(units):
    parts = ["#include <map>\n#include <memory>\n#include <string>\n#include <vector>\n"]
    for i in range(300):
        k, ns = f"{unit}_{i}", f"model{unit}::layer{i % 17}"
        parts.append(f"""
namespace model{unit} {{ namespace layer{i % 17} {{
struct Tensor{k} {{ std::vector<float> data; std::string name; int rank; std::map<std::string, int> attrs; }};
template <typename T> struct Holder{k} {{ std::unique_ptr<T> p; std::vector<T> items;
  inline int weigh(int x) const {{ return (int)items.size() * x + (p ? p->rank : 0); }} }};
static inline int scale{k}(int x) {{ return x * {i + 3} + (x >> 3); }}
static inline int mix{k}(const Tensor{k}& t, int x) {{ return scale{k}(x) + (int)t.data.size() + t.rank; }}
__attribute__((noinline)) int run{k}(Holder{k}<Tensor{k}>& h, int x) {{
  Tensor{k} t; t.rank = x; t.name = "t{k}"; t.data.resize(x & 7); t.attrs["a"] = x;
  h.items.push_back(t);
  int s = 0; for (int j = 0; j < x; j++) s += mix{k}(t, j) + h.weigh(j);
  return s;
}}
}} }}
""")
    parts.append(f"int entry{unit}(int x) {{ int s = 0;\n")
    for i in range(300):
        k, ns = f"{unit}_{i}", f"model{unit}::layer{i % 17}"
        parts.append(f"  {{ {ns}::Holder{k}<{ns}::Tensor{k}> h; s += {ns}::run{k}(h, x); }}\n")
    parts.append("  return s; }\n")
    open(f"{out}/u{unit}.cpp", "w").write("".join(parts))
with open(f"{out}/main.cpp", "w") as f:
    f.write("".join(f"int entry{u}(int);\n" for u in range(units)))
    f.write('extern "C" __declspec(dllexport) int bench_entry(int x) { return 0')
    f.write("".join(f" + entry{u}(x)" for u in range(units)) + "; }\n")
EOF
  for src in "$PD"/obj/*.cpp; do
    "${CXX[@]}" -c "$src" -o "${src%.cpp}.o" &
    # Two at a time.
    [ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
  done
  wait
  clang-14 --target=x86_64-w64-mingw32 -fuse-ld=/usr/bin/ld.lld-14 -g -shared -L"$GCC" \
    "$PD"/obj/*.o -o "$PD/bench.dll" -Wl,--pdb="$PD/symbols/bench.pdb" \
    -Wl,-Xlink=-pdbaltpath:%_PDB% -Wl,-Bstatic -lstdc++ -lgcc -lgcc_eh -Wl,-Bdynamic
  llvm-pdbutil dump --symbols "$PD/symbols/bench.pdb" > "$PD/procedures.txt"
  python3 scripts/pdb-bench-dump.py "$PD/bench.dll" "$PD/procedures.txt" "$PD/bench.dmp" 32 24
fi

# --- measure --------------------------------------------------------------------
summary=$WORK/summary.txt
: > "$summary"
measure() {
  local name=$1 dump=$2 symbols=$3
  local cache=$WORK/cache-$name
  local base=("$DT" analyze --no-system-symbols --symbols "$symbols" --format json)
  local none=("${base[@]}" --no-symbol-index -o /dev/null "$dump")
  local with=("${base[@]}" --symbols-cache "$cache" -o /dev/null "$dump")
  local mark="rm -rf $cache && ${with[*]}"
  say "$name: $(du -sh "$symbols" | cut -f1) of symbols"
  # The same answers without the index, from the run that makes it, and
  # through it.
  rm -rf "$cache"
  local answers
  answers=$(for run in none mark build read; do
    if [ $run = none ]; then "${base[@]}" --no-symbol-index "$dump"
    else "${base[@]}" --symbols-cache "$cache" "$dump"; fi 2>/dev/null |
      python3 -c 'import json, sys
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k != "symbols_tried"}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True))' | md5sum
  done | sort -u | wc -l)
  [ "$answers" = 1 ] || { echo "$name: answers differ with the index" >&2; exit 1; }
  hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/$name.json" \
    -n "no index" --prepare true "${none[*]}" \
    -n "indexing run" --prepare "$mark" "${with[*]}" \
    -n "later runs" --prepare true "${with[*]}" >&2
  local rss_none rss_build rss_read
  rss_none=$(/usr/bin/time -f %M "${none[@]}" 2>&1 >/dev/null | tail -n 1)
  eval "$mark" >/dev/null 2>&1
  rss_build=$(/usr/bin/time -f %M "${with[@]}" 2>&1 >/dev/null | tail -n 1)
  rss_read=$(/usr/bin/time -f %M "${with[@]}" 2>&1 >/dev/null | tail -n 1)
  python3 - "$WORK/$name.json" "$name" "$rss_none" "$rss_build" "$rss_read" "$(du -sh "$cache" | cut -f1)" >> "$summary" <<'EOF'
import json, sys
path, name, rss_none, rss_build, rss_read, size = sys.argv[1:]
t = {r["command"]: r["median"] for r in json.load(open(path))["results"]}
none, build, read = t["no index"], t["indexing run"], t["later runs"]
print(f"{name}: no index {none:.3f} s / {int(rss_none) / 1024:.0f} MiB; "
      f"indexing run {build:.3f} s ({build / none:.1f}x) / {int(rss_build) / 1024:.0f} MiB; "
      f"later runs {read:.3f} s ({none / read:.1f}x faster) / {int(rss_read) / 1024:.0f} MiB "
      f"({int(rss_read) / int(rss_none):.2f}x); index {size}")
EOF
}
measure dwarf "$DW/hung.dmp" "$DW/bin"
measure pdb "$PD/bench.dmp" "$PD/symbols"
cat "$summary"
