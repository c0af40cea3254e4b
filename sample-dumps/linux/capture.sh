#!/usr/bin/env bash
# Linux sample dumps, captured by dumptriage itself: builds the programs of
# tests/programs/ with gcc, runs them under `dumptriage run` (a hang at exit
# caught by --hang-timeout, a crash at exit caught at the fault), keeps the
# dumps here, and writes Breakpad symbols for their modules into symbols/
# (the programs, and this machine's libc, so the dumps are named anywhere).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
programs=$root/tests/programs
build=/tmp/dumptriage-linux-samples

say() { printf '== %s\n' "$*" >&2; }

command -v gcc >/dev/null || { echo "gcc is required" >&2; exit 1; }
command -v g++ >/dev/null || { echo "g++ is required" >&2; exit 1; }
command -v dump_syms >/dev/null || cargo install --locked dump_syms
cargo build --release --locked --manifest-path "$root/Cargo.toml"
dt=$root/target/release/dumptriage

rm -rf "$build" && mkdir -p "$build" && cd "$build"
# Source paths relative to the checkout: the binaries, their build ids and
# the symbol files are the same whichever folder the script runs from.
cflags=(-g -O0 -fno-omit-frame-pointer "-ffile-prefix-map=$root/=")
rpath='-Wl,-rpath,$ORIGIN'
say "building tests/programs"
gcc "${cflags[@]}" -fPIC -shared -o libpal.so "$programs/libpal.c" -lpthread
gcc "${cflags[@]}" -fPIC -shared -o libamdhip64.so "$programs/libamdhip64.c" -L. -lpal "$rpath" -lpthread
gcc "${cflags[@]}" -o hip_exit_hang "$programs/hip_exit_hang.c" -L. -lamdhip64 "$rpath" -lpthread
gcc "${cflags[@]}" -fPIC -shared -o libplugin.so "$programs/libplugin.c"
gcc "${cflags[@]}" -o unload_crash "$programs/unload_crash.c" -ldl
gcc "${cflags[@]}" -fPIC -shared -o libcudart.so "$programs/libcudart.c"
gcc "${cflags[@]}" -fPIC -shared -o libkernels.so "$programs/libkernels.c" -L. -lcudart "$rpath"
gcc "${cflags[@]}" -o cuda_exit_crash "$programs/cuda_exit_crash.c" -L. -lcudart "$rpath" -ldl
g++ "${cflags[@]}" -o static_dtor_throw "$programs/static_dtor_throw.cpp"
gcc "${cflags[@]}" -o tls_exit_crash "$programs/tls_exit_crash.c" -lpthread
g++ "${cflags[@]}" -o tls_exit_hang "$programs/tls_exit_hang.cpp" -lpthread
gcc "${cflags[@]}" -o exit_lock_hang "$programs/exit_lock_hang.c" -lpthread
gcc "${cflags[@]}" -o exit_deadlock "$programs/exit_deadlock.c" -lpthread
# A C++ extension of this machine's own CPython (Debian's python3), for the
# real interpreter's finalization.
python=/usr/bin/python3
if ! pyinc=$("$python-config" --includes 2>/dev/null); then
  say "installing python3-dev with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dev >/dev/null
  pyinc=$("$python-config" --includes)
fi
# shellcheck disable=SC2086 # the include flags are several words
g++ "${cflags[@]}" -fPIC -shared $pyinc -o pyfinal_ext.so "$programs/pyfinal_ext.cpp" -lpthread
gcc "${cflags[@]}" -fPIC -shared -o libslowinit.so "$programs/libslowinit.c" -lpthread -ldl
gcc "${cflags[@]}" -rdynamic -o dlopen_exit_hang "$programs/dlopen_exit_hang.c" -ldl -lpthread
gcc "${cflags[@]}" -fPIC -shared -Wl,-soname,libpython3.12.so.1.0 -o libpython3.12.so.1.0 "$programs/libpython3.c" -lpthread
gcc "${cflags[@]}" -o python3 "$programs/python3.c" -L. -l:libpython3.12.so.1.0 "$rpath"

rm -f "$here"/*.dmp && rm -rf "$here/symbols"

# capture NAME EXPECTED_STATUS CMD...: run CMD under dumptriage run and keep its dump.
capture() {
  local name=$1 want=$2 status=0
  shift 2
  say "dumptriage run -- $*"
  mkdir -p "dumps-$name"
  "$dt" run --hang-timeout 3 --dump-dir "dumps-$name" --format json -o "$name.json" -- "$@" \
    >/dev/null 2>"$name.stderr" || status=$?
  if [ "$status" != "$want" ]; then
    echo "$name: dumptriage run exited with $status, expected $want" >&2
    cat "$name.stderr" >&2
    exit 1
  fi
  mv "dumps-$name"/*.dmp "$here/$name.dmp"
}
capture hip-unregister-fatbinary-hang-linux 124 ./hip_exit_hang
capture crash-at-exit-after-dlclose-linux 139 ./unload_crash # 128 + SIGSEGV, as the shell reports it
capture cuda-runtime-teardown-at-exit-linux 139 ./cuda_exit_crash
capture abort-during-exit-linux 134 ./static_dtor_throw # 128 + SIGABRT
capture tls-destructor-crash-at-exit-linux 139 ./tls_exit_crash
capture tls-teardown-hang-at-exit-linux 124 ./tls_exit_hang
capture glibc-loader-lock-at-exit-linux 124 ./dlopen_exit_hang
capture mutex-held-by-worker-at-exit-linux 124 ./exit_lock_hang
capture lock-order-deadlock-at-exit-linux 124 ./exit_deadlock
capture python-exit-waits-for-thread-linux 124 ./python3
PYTHONPATH=$build capture python-thread-after-finalization-linux 134 "$python" -c "import pyfinal_ext"
# A real interpreter (pyenv's CPython 3.11) hung at exit by a non-daemon
# thread in queue.get: the dump keeps what its Python stacks need.
pyenv311=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.11.*/bin/python3.11 | tail -1)
capture python-threading-exit-hang-cpython-linux 124 "$pyenv311" "$root/tests/programs/python_exit_hang.py"

# The programs' own binaries (with DWARF), for the poor forms of
# twins.toml: what a user who has only their build's output holds.
rm -rf "$here/bin" && mkdir -p "$here/bin"
cp hip_exit_hang libamdhip64.so libpal.so unload_crash libplugin.so cuda_exit_crash libcudart.so \
  libkernels.so static_dtor_throw tls_exit_crash tls_exit_hang dlopen_exit_hang libslowinit.so \
  python3 libpython3.12.so.1.0 pyfinal_ext.so exit_lock_hang exit_deadlock "$here/bin/"

say "writing symbols"
libc=/lib/x86_64-linux-gnu/libc.so.6
ld=$(readlink -f /lib64/ld-linux-x86-64.so.2)
libstdcxx=$(readlink -f /lib/x86_64-linux-gnu/libstdc++.so.6)
libgcc=$(readlink -f /lib/x86_64-linux-gnu/libgcc_s.so.1)
for module in hip_exit_hang libamdhip64.so libpal.so unload_crash libplugin.so cuda_exit_crash libcudart.so \
  static_dtor_throw tls_exit_crash tls_exit_hang dlopen_exit_hang libslowinit.so python3 libpython3.12.so.1.0 \
  pyfinal_ext.so exit_lock_hang exit_deadlock "$(readlink -f "$python")" "$libc" "$ld" "$libstdcxx" "$libgcc"; do
  dump_syms "$module" > module.sym 2>/dev/null
  read -r _ _ _ id name < module.sym
  if [ "$module" = "$libc" ] || [ "$module" = "$ld" ]; then
    # The stripped libc only exports some names (exit's internal
    # __run_exit_handlers shows as a neighbouring export), and ld.so's
    # _dl_fini is no export at all. With Debian's libc6-dbg installed, add
    # the debug file's function records, without their line records to
    # keep the file small; CFI stays the binary's.
    bid=$(readelf -n "$module" | awk '/Build ID/ {print $3}')
    debug=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
    if [ -f "$debug" ]; then
      dump_syms "$debug" 2>/dev/null | grep '^FUNC ' > funcs.sym || true
      { grep -v '^STACK ' module.sym | grep -v '^PUBLIC '; cat funcs.sym; grep '^PUBLIC ' module.sym; grep '^STACK ' module.sym; } > merged.sym
      mv merged.sym module.sym
    else
      say "libc6-dbg is not installed: $name's frames are named from its exports only"
    fi
  elif [ "$module" = "$libstdcxx" ] || [ "$module" = "$libgcc" ]; then
    # Only the unwind information of the C++ runtime: without it the walk
    # of an abort stops in std::terminate. Its exports are left out: a
    # PUBLIC record has no size, so an internal function (the terminate
    # handler) would show as the export before it.
    grep -v '^PUBLIC ' module.sym > cfi.sym
    mv cfi.sym module.sym
  fi
  mkdir -p "$here/symbols/$name/$id"
  mv module.sym "$here/symbols/$name/$id/$name.sym"
done
du -sh "$here"/*.dmp "$here/symbols" >&2
# The same system libraries without their debug files, for the poor form
# of twins.toml that needs them (own_and_libs).
bash "$here/syslibs.sh"

# Thread ids change with every capture: refresh them in expected.toml from the
# dumps (the blamed thread as the analysis found it: the main thread, or the
# crashing worker).
# The expectations themselves (signatures, functions) are not touched.
say "updating thread ids in expected.toml"
python3 - "$here/../expected.toml" "$build" <<'PY'
import json, pathlib, re, sys
expected, build = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
text = expected.read_text()
for report_file in sorted(build.glob("*.json")):
    report = json.loads(report_file.read_text())["reports"][0]
    name = report_file.stem + ".dmp"
    start = text.find(f'file = "{name}"')
    if start < 0:
        sys.exit(f"expected.toml has no entry for {name}: add one")
    end = text.find("[[dump]]", start)
    end = len(text) if end < 0 else end
    blamed = report["exit_phase"]["blamed_thread"]
    threads = sorted(report["threads"], key=lambda t: t["id"])
    ids = ", ".join(str(t["id"]) for t in threads)
    names = ", ".join(f'"{t["id"]}={t["name"]}"' for t in threads if t["name"])
    block = text[start:end]
    block = re.sub(r"(?m)^blamed_thread_id = .*$", f"blamed_thread_id = {blamed}", block)
    block = re.sub(r"(?m)^thread_ids = .*$", f"thread_ids = [{ids}]", block)
    block = re.sub(r"(?m)^thread_names = .*$", f"thread_names = [{names}]", block)
    text = text[:start] + block + text[end:]
expected.write_text(text)
PY
