#!/usr/bin/env bash
# Builds the tools some tests check the deployment files with — kustomize (what
# `kubectl kustomize` runs), helm (lint and template of the generated charts)
# and composecheck (the Compose specification's own loader, compose-go) — from
# the Go modules pinned beside this script, and takes Knative's CRDs (Service,
# ApiServerSource, Broker, Trigger) from the Knative releases' own modules, so
# the test bed can check deploy/knative against Knative's real schemas, and the
# Prometheus Operator's CRDs (PodMonitor, PrometheusRule) from its module, for
# the generated monitoring. Once, into a cache keyed by everything that decides
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

# the Knative release whose CRDs deploy/knative is checked against
knative_eventing=v0.45.0
knative_serving=v0.45.0
# the Prometheus Operator release whose CRDs the generated monitoring is checked against
prometheus_operator=v0.85.0

if [ -x "$out/bin/kustomize" ] && [ -x "$out/bin/helm" ] && [ -x "$out/bin/composecheck" ] && [ -f "$out/knative/trigger.yaml" ] \
  && [ -f "$out/prometheus-operator/monitoring.coreos.com_prometheusrules.yaml" ]; then
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
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$staging/bin/helm" helm.sh/helm/v3/cmd/helm)
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$staging/bin/composecheck" ./composecheck)
module_dir() { (cd "$here" && go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'); }
eventing=$(module_dir "knative.dev/eventing@$knative_eventing")
serving=$(module_dir "knative.dev/serving@$knative_serving")
mkdir -p "$staging/knative"
cp "$eventing/config/core/resources/"{apiserversource,broker,trigger}.yaml "$staging/knative/"
cp "$serving/config/core/300-resources/service.yaml" "$staging/knative/"
prometheus=$(module_dir "github.com/prometheus-operator/prometheus-operator@$prometheus_operator")
mkdir -p "$staging/prometheus-operator"
cp "$prometheus/example/prometheus-operator-crd/monitoring.coreos.com_"{podmonitors,prometheusrules}.yaml "$staging/prometheus-operator/"

rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
echo "tools built in $out/bin" >&2
echo "$out/bin"
