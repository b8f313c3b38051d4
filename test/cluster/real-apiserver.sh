#!/usr/bin/env bash
# A real kube-apiserver for the cluster suite (docs/deployments.md "Testing against Kubernetes"): Debian's `kubernetes` source
# package (1.20.2) built once with Debian's Go toolchain into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci/kube-apiserver-1.20.2/kube-apiserver
# and run on loopback over Debian's etcd-server. Package sources are apt's configured ones (the
# deb lines of /etc/apt/sources.list.d/*.sources, reused as deb-src in a private apt state).
#
# Usage:
#   test/cluster/real-apiserver.sh build          build once (about 8 minutes on 2 cores, 3 GB)
#   test/cluster/real-apiserver.sh start <dir>    start etcd + kube-apiserver; writes <dir>/kubeconfig,
#                                                 <dir>/pids, <dir>/viewer-token (a user with no
#                                                 role); prints the kubeconfig path when ready
#   test/cluster/real-apiserver.sh stop <dir>     stop what start started
#   test/cluster/real-apiserver.sh path           print the binary's path if built (exit 1 if not)
set -euo pipefail

version=1.20.2
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci"
out="$cache/kube-apiserver-$version"
bin="$out/kube-apiserver"

log() { echo "real-apiserver: $*" >&2; }

need_packages() {
  local missing=()
  command -v go >/dev/null || missing+=(golang-go)
  command -v rsync >/dev/null || missing+=(rsync)
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
  command -v openssl >/dev/null || missing+=(openssl)
  [ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || missing+=(golang-github-modern-go-reflect2-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  fi
}

fetch_source() {
  local work="$1"
  local apt="$work/apt"
  mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial"
  # deb-src twins of the configured deb sources (deb822 files and one-line sources.list).
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    sed -e 's/^Types: .*/Types: deb-src/' "$f" >"$apt/sources/$(basename "$f")"
  done
  if [ -f /etc/apt/sources.list ]; then
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >"$apt/sources/one-line.list" || true
  fi
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/sources"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root")
  apt-get "${opts[@]}" update -q >&2
  (cd "$work" && apt-get "${opts[@]}" source -q --download-only kubernetes >&2)
  (cd "$work" && dpkg-source --no-check -x kubernetes_*.dsc src >&2)
}

build() {
  if [ -x "$bin" ]; then
    echo "$bin"
    return
  fi
  need_packages
  mkdir -p "$cache"
  local work
  work="$(mktemp -d "$cache/.kube-build.XXXXXX")"
  chmod 755 "$work"
  log "fetching the kubernetes $version source into $work"
  fetch_source "$work"
  local src="$work/src"
  # reflect2 1.0.1 crashes under Go 1.18+: put Debian's 1.0.2 files in its place (the build runs in
  # GOPATH mode, so go.mod and vendor/modules.txt, which keep saying v1.0.1, are not consulted).
  rm -rf "$src/vendor/github.com/modern-go/reflect2"
  rsync -a --exclude '*_test.go' --exclude go.mod /usr/share/gocode/src/github.com/modern-go/reflect2/ "$src/vendor/github.com/modern-go/reflect2/"
  log "building kube-apiserver (several minutes)"
  # As debian/rules does: the tree's own make (GOPATH layout through a symlink; it calls rsync).
  mkdir -p "$src/.go/src/k8s.io"
  ln -sfn ../../.. "$src/.go/src/k8s.io/kubernetes"
  (cd "$src" && env HOME="$work/home" GOPATH="$src/.go" CGO_ENABLED=0 GOCACHE="$work/gocache" \
    KUBE_GIT_VERSION="v$version" KUBE_GIT_TREE_STATE=clean make WHAT=cmd/kube-apiserver >&2)
  cp "$src/_output/bin/kube-apiserver" "$work/kube-apiserver"
  mkdir -p "$out"
  mv "$work/kube-apiserver" "$bin"
  rm -rf "$work"
  log "built $bin"
  echo "$bin"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

start() {
  local dir="$1"
  [ -x "$bin" ] || { log "not built: run '$0 build' first"; exit 1; }
  command -v etcd >/dev/null || { log "etcd not installed (apt-get install etcd-server)"; exit 1; }
  mkdir -p "$dir"
  local etcd_port peer_port api_port token
  etcd_port="$(free_port)"
  peer_port="$(free_port)"
  api_port="$(free_port)"
  token="$(openssl rand -hex 16)"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$dir/serving.key" -out "$dir/serving.crt" -subj /CN=kube-apiserver \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -addext "basicConstraints=critical,CA:TRUE" 2>/dev/null
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  # Two identities: dm-test (system:masters, used by the kubeconfig) and dm-viewer (no role: RBAC
  # lets it discover kinds but not write; its token is in <dir>/viewer-token).
  openssl rand -hex 16 >"$dir/viewer-token"
  printf '%s,dm-test,dm-test,system:masters\n%s,dm-viewer,dm-viewer\n' "$token" "$(cat "$dir/viewer-token")" >"$dir/tokens.csv"
  etcd --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$peer_port" \
    >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/pids"
  "$bin" --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$dir/serving.crt" --tls-private-key-file "$dir/serving.key" --cert-dir "$dir/certs" \
    --token-auth-file "$dir/tokens.csv" --authorization-mode RBAC \
    --service-account-key-file "$dir/sa.key" --service-account-signing-key-file "$dir/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.0.0.0/24 \
    --disable-admission-plugins ServiceAccount --insecure-port 0 >"$dir/apiserver.log" 2>&1 &
  echo $! >>"$dir/pids"
  cat >"$dir/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(base64 -w0 "$dir/serving.crt")
users:
- name: real
  user: {token: $token}
contexts:
- name: real
  context: {cluster: real, user: real, namespace: default}
current-context: real
KUBECONFIG
  for _ in $(seq 1 120); do
    if curl -sf --cacert "$dir/serving.crt" -H "Authorization: Bearer $token" \
      "https://127.0.0.1:$api_port/readyz" >/dev/null 2>&1; then
      echo "$dir/kubeconfig"
      return
    fi
    sleep 0.5
  done
  log "kube-apiserver did not become ready; see $dir/apiserver.log"
  stop "$dir"
  exit 1
}

stop() {
  local dir="$1"
  [ -f "$dir/pids" ] || return 0
  # kube-apiserver first (it was started last), then etcd; SIGKILL whatever is still up after 10 s.
  local pids
  pids="$(tac "$dir/pids")"
  for pid in $pids; do
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -f "$dir/pids"
}

case "${1:-}" in
build) build ;;
start) start "${2:?usage: $0 start <dir>}" ;;
stop) stop "${2:?usage: $0 stop <dir>}" ;;
path) [ -x "$bin" ] && echo "$bin" ;;
*)
  echo "usage: $0 build | start <dir> | stop <dir> | path" >&2
  exit 2
  ;;
esac
