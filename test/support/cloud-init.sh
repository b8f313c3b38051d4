#!/usr/bin/env bash
# Fetches cloud-init's Debian package and unpacks it into a cache directory, for the differential
# merge test (test/merge/) and bench/merge.ts, which call cloud-init's own merging code.
#
# It never installs cloud-init (no service, no maintainer scripts): `apt-get download` + `dpkg -x`
# into ${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci/cloud-init-<version>/, then points the stable link
# ${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci/cloud-init at it. Running it again is cheap (cached by version).
# Prints the directory to put on PYTHONPATH.
#
# Usage: test/support/cloud-init.sh [--no-update]   (--no-update: never run `apt-get update`)
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/dm-ci"
update=1
[ "${1:-}" = "--no-update" ] && update=0

candidate() { apt-cache policy cloud-init 2>/dev/null | awk '/Candidate:/ {print $2}'; }

version="$(candidate)"
if { [ -z "$version" ] || [ "$version" = "(none)" ]; } && [ "$update" = 1 ]; then
  echo "cloud-init.sh: no cloud-init candidate in the package lists; running apt-get update" >&2
  apt-get update >&2
  version="$(candidate)"
fi
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
  echo "cloud-init.sh: apt-cache knows no cloud-init package (is this a Debian/Ubuntu machine?)" >&2
  exit 1
fi

safe="${version//[^A-Za-z0-9.+~_-]/_}"
dir="$cache/cloud-init-$safe"
site="usr/lib/python3/dist-packages"

if [ ! -f "$dir/.complete" ]; then
  mkdir -p "$cache"
  work="$(mktemp -d "$cache/.download.XXXXXX")"
  chmod 755 "$work" # so that apt can download as its sandbox user
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download -q "cloud-init=$version" >&2)
  deb="$(ls "$work"/cloud-init_*.deb)"
  mkdir -p "$work/root"
  dpkg -x "$deb" "$work/root"
  if [ ! -f "$work/root/$site/cloudinit/mergers/__init__.py" ]; then
    echo "cloud-init.sh: $deb has no $site/cloudinit/mergers" >&2
    exit 1
  fi
  echo "$version" >"$work/root/.version"
  rm -rf "$dir"
  mv "$work/root" "$dir"
  touch "$dir/.complete"
fi

ln -sfn "cloud-init-$safe" "$cache/cloud-init.tmp" && mv -T "$cache/cloud-init.tmp" "$cache/cloud-init"
echo "$cache/cloud-init/$site"
