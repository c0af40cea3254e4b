# Sourced by the benchmark scripts (from the repository root): installs
# what they need and builds dumptriage; sets DT and defines say.
say() { printf '== %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------
need_apt=()
command -v hyperfine >/dev/null || need_apt+=(hyperfine)
[ -x /usr/bin/time ] || need_apt+=(time)
command -v clang-14 >/dev/null || need_apt+=(clang-14)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing ${need_apt[*]} with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
version=$(cargo metadata --format-version 1 --locked 2>/dev/null |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="minidump-processor"))')
if ! minidump-stackwalk --version 2>/dev/null | grep -q "$version"; then
  say "installing minidump-stackwalk $version"
  cargo install --locked minidump-stackwalk --version "$version"
fi
command -v dump_syms >/dev/null || cargo install --locked dump_syms
cargo build --release --locked
DT=$PWD/target/release/dumptriage
