#!/usr/bin/env bash
# Builds the real servers the test bed runs (kube-apiserver, kube-controller-manager,
# etcd, nats-server) from the Go modules pinned beside this script, once, into a
# cache outside the repository keyed by everything that decides the result.
# Prints the directory holding the binaries on its last line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${KUBEBUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubebus}

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: the Go toolchain is missing: install Go >= 1.26 (https://go.dev/dl) and put 'go' on PATH" >&2
  exit 1
fi

key=$( {
  cat "$here/build.sh" "$here/kube/go.mod" "$here/kube/go.sum" "$here/nats/go.mod" "$here/nats/go.sum"
  go version
} | sha256sum | cut -c1-16)
out="$cache_root/servers/$key"
binaries=(kube-apiserver kube-controller-manager etcd nats-server)

complete() {
  for b in "${binaries[@]}"; do [ -x "$out/bin/$b" ] || return 1; done
}

if complete; then
  echo "servers already built in $out/bin" >&2
  echo "$out/bin"
  exit 0
fi

kube_version=$(cd "$here/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$kube_version" | cut -d. -f2)
version_pkg=k8s.io/component-base/version
# Without these the apiserver reports v0.0.0-master, which trips version checks.
kube_ldflags="-s -w -X $version_pkg.gitVersion=$kube_version -X $version_pkg.gitMajor=1 -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"

staging=$(mktemp -d "$cache_root/servers/.build-XXXXXX" 2>/dev/null || { mkdir -p "$cache_root/servers" && mktemp -d "$cache_root/servers/.build-XXXXXX"; })
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin"

build() { # dir, output name, package, ldflags
  local started=$SECONDS
  echo "building $2 ($3) ..." >&2
  (cd "$here/$1" && CGO_ENABLED=0 go build -trimpath -ldflags "$4" -o "$staging/bin/$2" "$3")
  echo "built $2 in $((SECONDS - started))s" >&2
}

build nats nats-server github.com/nats-io/nats-server/v2 "-s -w"
build kube etcd go.etcd.io/etcd/server/v3 "-s -w"
build kube kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"
build kube kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kube_ldflags"

rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$staging" "$out"
trap - EXIT
echo "servers built in $out/bin" >&2
echo "$out/bin"
