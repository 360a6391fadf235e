#!/usr/bin/env bash
# Builds the bench's Go controller-runtime operator from the module versions
# pinned beside this script (Go module proxy), once, into a cache keyed by its
# sources. Prints the directory holding the binary on its last line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${KUBEBUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubebus}

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: the Go toolchain is missing: install Go >= 1.26 (https://go.dev/dl) and put 'go' on PATH" >&2
  exit 1
fi

key=$( {
  cat "$here"/build.sh "$here"/go.mod "$here"/go.sum "$here"/*.go
  go version
} | sha256sum | cut -c1-16)
out="$cache_root/bench/controller-runtime-$key"

if [ -x "$out/databasecluster-cr" ]; then
  echo "$out"
  exit 0
fi

mkdir -p "$cache_root/bench"
staging=$(mktemp -d "$cache_root/bench/.build-XXXXXX")
trap 'rm -rf "$staging"' EXIT
echo "building the controller-runtime operator (a few minutes, once) ..." >&2
(cd "$here" && CGO_ENABLED=0 go build -trimpath -o "$staging/databasecluster-cr" .)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
echo "$out"
