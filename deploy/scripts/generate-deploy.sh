#!/usr/bin/env bash
# Regenerates what deploy/ ships for the DatabaseCluster example with
# `kubebus generate`: deploy/kubernetes/base (the kustomize base) and
# deploy/helm/databasecluster (the Helm chart). The overlays, deploy/knative
# and deploy/nats (the local stack's NATS) are written by hand on top.
# `npm run generate:deploy`; test/integration/deploy.test.ts fails when these
# differ from what generate writes. With a directory argument, writes the two
# there instead (base/, helm/) and leaves deploy/ alone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target=${1:-}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$root" && node --conditions=source --import tsx packages/kubebus/src/cli/main.ts generate \
  examples/databasecluster/operator.ts --out "$out" --format all \
  --namespace kubebus-system \
  --image ghcr.io/kubebus/kubebus:0.1.0 \
  --module dist/operators/databasecluster.js >/dev/null)

if [ -n "$target" ]; then
  mkdir -p "$target"
  cp -r "$out/kustomize" "$target/base"
  cp -r "$out/helm/databasecluster" "$target/helm"
  exit 0
fi
rm -rf "$root/deploy/kubernetes/base" "$root/deploy/helm/databasecluster"
mkdir -p "$root/deploy/helm"
cp -r "$out/kustomize" "$root/deploy/kubernetes/base"
cp -r "$out/helm/databasecluster" "$root/deploy/helm/databasecluster"
echo "wrote deploy/kubernetes/base and deploy/helm/databasecluster"
