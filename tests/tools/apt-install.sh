#!/usr/bin/env bash
# Installs Debian packages for a test stage: as root, or with sudo; the
# package lists are refreshed only when the first attempt fails. Exits 0
# when installed, 1 when it cannot (no root and no sudo, or apt failed),
# with apt's output in LOG.
# usage: tests/tools/apt-install.sh LOG PACKAGE...
set -uo pipefail
log="$1"
shift
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
  echo "not root, and no sudo" >"$log"
  exit 1
fi
apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get "$@" >>"$log" 2>&1; }
: >"$log"
apt install -y -q "$@" || { apt update -q && apt install -y -q "$@"; }
