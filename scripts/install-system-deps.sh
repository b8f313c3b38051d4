#!/usr/bin/env bash
# Installs the Debian packages the test suite uses (real components the tests start themselves),
# so that `npm test` passes on a fresh machine. Run by `npm test` (its pretest step) and by .ci/run.
#
#   scripts/install-system-deps.sh           install what is missing, when it can
#   scripts/install-system-deps.sh --check   only say what is missing (exit 1 if anything is)
#
# It installs with apt-get when it can (running as root, or with passwordless sudo); otherwise it
# prints the exact command to run and stops with exit status 1. When nothing is missing it prints
# nothing and changes nothing (no `apt-get update`), so running it before every test run is cheap.
# See "Tests" in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  *) echo "install-system-deps.sh: unknown argument $1 (usage: $0 [--check])" >&2; exit 2 ;;
esac

need=()
add() { for p in "$@"; do [[ " ${need[*]-} " == *" $p "* ]] || need+=("$p"); done; }

command -v git >/dev/null || add git
# Debian's Chromium, driven by playwright-core in the web pages' browser tests (never a downloaded browser).
[ -x /usr/bin/chromium ] || add chromium
command -v python3 >/dev/null || add python3
# zsh and fish run dm's completion scripts for them (test/cli/completion.test.ts), as bash does.
command -v zsh >/dev/null || add zsh
command -v fish >/dev/null || add fish
# python3 modules: the Python template sandbox (yaml), the GitHub stand-in clients (requests,
# jsonpatch) and the oracle of the expansion fidelity suite, Python's Jinja2 (test/expand/).
py_ok() { python3 -c "import $1" 2>/dev/null || /usr/bin/python3 -c "import $1" 2>/dev/null; }
py_ok yaml || add python3-yaml
py_ok requests || add python3-requests
py_ok jsonpatch || add python3-jsonpatch
py_ok jinja2 || add python3-jinja2
# DM's draft-4 schema defaults in the expansion reference (test/expand/dm_reference.py).
py_ok jsonschema || add python3-jsonschema
# OCI registries (test/oci): Debian's docker-registry (the CNCF distribution server) started by the
# tests on loopback, htpasswd (apache2-utils) for its basic authentication, skopeo as an independent client.
[ -x /usr/bin/docker-registry ] || add docker-registry
command -v skopeo >/dev/null || add skopeo
command -v htpasswd >/dev/null || add apache2-utils
# PostgreSQL's server binaries (initdb, pg_ctl): the tests start their own cluster in a temp dir.
{ command -v pg_ctl >/dev/null && command -v initdb >/dev/null; } ||
  compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null || add postgresql postgresql-contrib
# The en_US.UTF-8 locale: the PostgreSQL tests' cluster is created with it, as operators' are
# (docs/server.md, "Text is compared as bytes").
# (grep reads the whole list: `grep -q` would stop at the match, and `locale` writing on into the
# closed pipe would fail the pipeline under pipefail, now and then, as if the locale were missing.)
locale -a 2>/dev/null | grep -i '^en_US\.utf-\?8$' >/dev/null || add locales-all
# The cluster suite runs (inside npm test) when a real kube-apiserver is built and cached
# (test/cluster/real-apiserver.sh build); it runs over Debian's etcd.
if bash test/cluster/real-apiserver.sh path >/dev/null 2>&1; then
  command -v etcd >/dev/null || add etcd-server
fi
# The package and image tests (test/package/): better-sqlite3's native module is built for each
# supported Node with node-gyp (a C++ compiler and make); the dm-registry image is built with buildah
# from a Debian base made with mmdebstrap (docs/packaging.md).
{ command -v g++ >/dev/null && command -v make >/dev/null; } || add g++ make
command -v buildah >/dev/null || add buildah
command -v mmdebstrap >/dev/null || add mmdebstrap
# apt-get download and dpkg -x fetch cloud-init's merging code for the differential merge test.
command -v dpkg >/dev/null || { echo "install-system-deps.sh: this is not a Debian machine (no dpkg)" >&2; exit 1; }

# kubectl is not a Debian package dm can use: Debian's kubernetes-client is 1.20, older than the
# kubectl behaviour the stand-in tests pin down. It has to come with the machine.
kubectl_missing=0
command -v kubectl >/dev/null || kubectl_missing=1

cloud_init_cached() { [ -e "${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci/cloud-init" ]; }

if [ ${#need[@]} -gt 0 ]; then
  command="apt-get update && apt-get install -y --no-install-recommends ${need[*]}"
  if [ "$check_only" = 1 ]; then
    echo "install-system-deps.sh: missing Debian packages: ${need[*]}" >&2
    echo "install with: sudo sh -c '$command'" >&2
    exit 1
  fi
  if [ "$(id -u)" = 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "install-system-deps.sh: the tests need these Debian packages: ${need[*]}" >&2
    echo "run this (as root), then the tests again:" >&2
    echo "  sudo sh -c '$command'" >&2
    exit 1
  fi
  echo "install-system-deps.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q >&2
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >&2
fi

if ! cloud_init_cached; then
  if [ "$check_only" = 1 ]; then
    echo "install-system-deps.sh: cloud-init's merging code is not unpacked (bash test/support/cloud-init.sh)" >&2
    exit 1
  fi
  # cloud-init's own merging code, unpacked (never installed) into the cache, for the differential test.
  bash test/support/cloud-init.sh >/dev/null
fi

if [ "$kubectl_missing" = 1 ]; then
  echo "install-system-deps.sh: kubectl (1.27 or newer) is required and not installed;" \
    "install it from the Kubernetes project's packages (Debian's kubernetes-client 1.20 is too old)" >&2
  exit 1
fi
