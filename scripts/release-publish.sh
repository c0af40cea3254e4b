#!/usr/bin/env bash
# Publishes the archives of a release (release.yml's last job): creates the
# GitHub release of TAG, with the CHANGELOG's notes for it, and uploads
# every archive and .sha256 file of DIR. Needs the GitHub CLI (`gh`, on
# GitHub's runners) and GH_TOKEN.
#
#   scripts/release-publish.sh TAG DIR
set -euo pipefail
cd "$(dirname "$0")/.."
tag="$1"
dir="$2"
version="${tag#v}"
notes=$(mktemp)
trap 'rm -f "$notes"' EXIT
# The CHANGELOG section of this version, without its heading.
awk -v v="$version" '
  /^## \[/ { on = (index($0, "[" v "]") > 0); next }
  on { print }
' CHANGELOG.md > "$notes"
[ -s "$notes" ] || echo "dumptriage $version" > "$notes"
shopt -s nullglob
files=("$dir"/*/*.tar.gz "$dir"/*/*.zip "$dir"/*/*.sha256 "$dir"/*.tar.gz "$dir"/*.zip "$dir"/*.sha256)
[ ${#files[@]} -gt 0 ] || { echo "release-publish.sh: nothing to publish in $dir" >&2; exit 1; }
gh release create "$tag" --title "dumptriage $version" --notes-file "$notes" "${files[@]}"
