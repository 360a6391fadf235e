#!/usr/bin/env bash
# Makes the dev overlay's secrets, once, on this machine: a random password per
# NATS user (nats-users.env: the keys the base reads from kubebus-nats), a CA
# with NATS' certificate (nats-tls/), and one with /metrics' certificate
# (metrics-tls/, for the name the PodMonitor verifies). Nothing here is in git (.gitignore):
# every checkout gets its own. Run it before `kubectl apply -k`; run it again
# after deleting the files to get new ones. The certificates are made again
# when missing or when either expires within 30 days (then apply again: the
# NATS pods' config reloader picks the new ones up).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
umask 077

# every key the base's pods read from kubebus-nats, and every key the example
# documents; a key added later (a new NATS user) gets a password next run
keys=$( {
  sed -n 's/^\([a-z-]*\)=$/\1/p' ../../nats-users.env.example
  grep -rh -A1 'name: kubebus-nats$' ../../base | sed -n 's/^ *key: *\([a-z-]*\)$/\1/p'
} | sort -u)
touch nats-users.env
for key in $keys; do
  grep -q "^$key=" nats-users.env || echo "$key=$(openssl rand -hex 24)" >>nats-users.env
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

# valid for 30 more days (2592000 s)?
fresh() { [ -s "$1" ] && openssl x509 -checkend 2592000 -noout -in "$1" >/dev/null 2>&1; }
if ! fresh nats-tls/tls.crt || ! fresh nats-tls/ca.crt; then
  mkdir -p nats-tls
  openssl req -x509 "${ec[@]}" -keyout "$work/ca.key" -out nats-tls/ca.crt \
    -days 365 -subj /CN=kubebus-dev-nats-ca 2>/dev/null
  ns=kubebus-system
  sans="DNS:nats,DNS:nats.$ns,DNS:nats.$ns.svc,DNS:nats.$ns.svc.cluster.local"
  sans="$sans,DNS:*.nats-headless,DNS:*.nats-headless.$ns.svc,DNS:*.nats-headless.$ns.svc.cluster.local"
  sans="$sans,DNS:localhost,IP:127.0.0.1"
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$sans" >"$work/ext"
  openssl req "${ec[@]}" -keyout nats-tls/tls.key -out "$work/tls.csr" -subj /CN=nats 2>/dev/null
  openssl x509 -req -in "$work/tls.csr" -CA nats-tls/ca.crt -CAkey "$work/ca.key" \
    -CAcreateserial -out nats-tls/tls.crt -days 365 -extfile "$work/ext" 2>/dev/null
fi

# /metrics' certificate, for the name the PodMonitor verifies (what cert-manager/ issues)
if ! fresh metrics-tls/tls.crt || ! fresh metrics-tls/ca.crt; then
  mkdir -p metrics-tls
  openssl req -x509 "${ec[@]}" -keyout "$work/ca.key" -out metrics-tls/ca.crt \
    -days 365 -subj /CN=kubebus-dev-metrics-ca 2>/dev/null
  name=kubebus-databasecluster-metrics.kubebus-system.svc
  printf 'subjectAltName=DNS:%s,DNS:%s.cluster.local\nextendedKeyUsage=serverAuth\n' \
    "$name" "$name" >"$work/ext"
  openssl req "${ec[@]}" -keyout metrics-tls/tls.key -out "$work/tls.csr" -subj "/CN=$name" 2>/dev/null
  openssl x509 -req -in "$work/tls.csr" -CA metrics-tls/ca.crt -CAkey "$work/ca.key" \
    -CAcreateserial -out metrics-tls/tls.crt -days 365 -extfile "$work/ext" 2>/dev/null
fi
echo "dev secrets in $here (nats-users.env, nats-tls/, metrics-tls/)"
