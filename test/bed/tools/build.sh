#!/usr/bin/env bash
# Builds the tools some tests check the deployment files with — kustomize (what
# `kubectl kustomize` runs), helm (lint and template of the generated charts)
# and composecheck (the Compose specification's own loader, compose-go) — from
# the Go modules pinned beside this script. The last resort of test/bed/tools.ts,
# after KUBEBUS_TOOLS, PATH and the release archives (and, for composecheck,
# `docker compose`); the CRD files come from their modules without Go
# (test/bed/tool-crds.ts). Once, into a cache keyed by everything that decides
# the result. Prints the directory holding the binaries on its last line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${KUBEBUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubebus}

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: the Go toolchain is missing: install Go >= 1.26 (https://go.dev/dl) and put 'go' on PATH" >&2
  exit 1
fi

key=$( {
  cat "$here/build.sh" "$here/go.mod" "$here/go.sum" "$here/composecheck/main.go"
  go version
} | sha256sum | cut -c1-16)
out="$cache_root/tools/$key"

# helm's release builds stamp the version (v3.22.0); a plain build prints only v3.22
helm_version=$(sed -n 's/^[[:space:]]*helm\.sh\/helm\/v3 \(v[0-9][0-9.]*\)$/\1/p' "$here/go.mod")
if [ -z "$helm_version" ]; then
  echo "build.sh: $here/go.mod pins no helm.sh/helm/v3 version" >&2
  exit 1
fi

if [ -x "$out/bin/kustomize" ] && [ -x "$out/bin/helm" ] && [ -x "$out/bin/composecheck" ]; then
  echo "tools already built in $out/bin" >&2
  echo "$out/bin"
  exit 0
fi

mkdir -p "$cache_root/tools"
staging=$(mktemp -d "$cache_root/tools/.build-XXXXXX")
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin"
echo "building kustomize, helm and composecheck ..." >&2
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$staging/bin/kustomize" sigs.k8s.io/kustomize/kustomize/v5)
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version" -o "$staging/bin/helm" helm.sh/helm/v3/cmd/helm)
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$staging/bin/composecheck" ./composecheck)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
echo "tools built in $out/bin" >&2
echo "$out/bin"
