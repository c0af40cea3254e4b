#!/usr/bin/env bash
# Packs dumptriage as a release publishes it: one archive per target,
# dumptriage-VERSION-TARGET.tar.gz (.zip for Windows) holding the binary,
# README.md and CHANGELOG.md in a folder of the same name, and beside it
# ARCHIVE.sha256 ("HASH  ARCHIVE", what `sha256sum -c` reads).
#
#   scripts/package.sh [--target TRIPLE] [--binary PATH] [--out DIR]
#
# --target   the Rust target (default: this machine's); the binary is built
#            with `cargo build --release --locked --target TRIPLE`
# --binary   pack this binary instead of building one (tests/ci_recipe.rs
#            packs the binary under test this way)
# --out      where the archive goes (default: target/dist)
#
# Prints the archive's path. Used by .github/workflows/release.yml.
set -euo pipefail
cd "$(dirname "$0")/.."

target=""
binary=""
out="target/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
[ -n "$target" ] || target=$(rustc -vV | sed -n 's/^host: //p')
exe=""
case "$target" in *windows*) exe=".exe" ;; esac

if [ -z "$binary" ]; then
  cargo build --release --locked --target "$target"
  binary="target/$target/release/dumptriage$exe"
fi
[ -f "$binary" ] || { echo "package.sh: no binary at $binary" >&2; exit 1; }

name="dumptriage-$version-$target"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$binary" "$stage/$name/dumptriage$exe"
cp README.md CHANGELOG.md "$stage/$name/"

case "$target" in
  *windows*)
    archive="$name.zip"
    # 7-Zip is on GitHub's Windows runners; elsewhere, zip.
    if command -v 7z >/dev/null; then
      (cd "$stage" && 7z a -tzip -bd "$archive" "$name" >/dev/null)
    else
      (cd "$stage" && zip -qr "$archive" "$name")
    fi ;;
  *)
    archive="$name.tar.gz"
    tar -C "$stage" -czf "$stage/$archive" "$name" ;;
esac
mv "$stage/$archive" "$out/$archive"

if command -v sha256sum >/dev/null; then
  (cd "$out" && sha256sum "$archive" > "$archive.sha256")
else
  (cd "$out" && shasum -a 256 "$archive" > "$archive.sha256")
fi
echo "$out/$archive"
